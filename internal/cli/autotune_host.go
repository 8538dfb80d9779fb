package cli

// THE SEAM. This file is redline autotune's host side: a managed
// redis-server started, and every trial's changes applied scoped and
// rolled back, through the one server-host API (serverhost.Host, issue
// 23); the load is generated here. The host is opened locally
// (serverhost.NewLocal); a server host over --ssh is serverhost.Open with
// a Dial, not wired yet. Nothing else in autotune knows how the host is
// reached; how one trial's knobs reach it is autotune_trial.go.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"redline/internal/bench"
	"redline/internal/bench/cmdline"
	"redline/internal/lab"
	"redline/internal/redisadmin"
	"redline/internal/remote"
	"redline/internal/serverhost"
	"redline/internal/tune"
)

// rollbackTimeout bounds the rollback after a trial, also when the
// session was interrupted, and the host's close.
const rollbackTimeout = 30 * time.Second

// localTarget is a redis-server started on the host, measured with one
// workload; every trial runs on a server started with its start-up
// settings (the baseline's first: autotune_trial.go keeps a pool), its
// changes applied scoped through the host's tune journal and rolled back
// by their session after the measurement.
type localTarget struct {
	host  serverhost.Host
	addr  string // the baseline server's
	redis *remote.RedisTarget
	admin *redisadmin.Conn
	opts  bench.Options
	test  bench.Test
	p99   bool

	// managed: autotune started the server, so start-up knobs can be
	// tried (an attached server keeps its settings).
	managed bool
	start   remote.RedisStartArgs // the baseline server's
	servers map[string]*trialServer
	clock   int
	// profilePlans are the tune profiles planned per server and set.
	profilePlans map[string]*tune.Plan
	cpus         map[string]resolvedCPUs
	cpusErr      error
	// The production-host guard (lab.GuardHostWide): host-wide changes
	// are left out when hostWideOff; guardLine says why.
	hostWideOff bool
	guardLine   string
	serverNetNS string
	// beforeMeasure, when set (tests), sees the trial's server with
	// everything applied, just before the measurement.
	beforeMeasure func(*trialServer)
}

// startLocalTarget opens this machine as the server host (its journal in
// stateDir, held from the first trial), takes the redis-servers already
// running (for the production-host guard: allowHostWide overrides it),
// starts the server with its extra redis.conf lines and aims the
// workload at it.
func startLocalTarget(ctx context.Context, config []string, wl cmdline.Workload, p99 bool, stateDir string, allowHostWide bool) (*localTarget, error) {
	h := serverhost.NewLocal(serverhost.LocalOptions{StateDir: stateDir, Holder: "redline autotune"})
	t := &localTarget{host: h, test: wl.Tests[0], p99: p99, managed: true, start: remote.RedisStartArgs{Config: config},
		servers: map[string]*trialServer{}, profilePlans: map[string]*tune.Plan{}}
	t.guard(lab.OtherServers("/"), allowHostWide)
	srv, err := t.server(ctx, t.start)
	if err != nil {
		t.close()
		return nil, err
	}
	t.addr, t.redis, t.admin = srv.addr, srv.redis, srv.admin
	if err := t.resolveCPUs(ctx); err != nil {
		t.close()
		return nil, err
	}
	t.opts = wl.Options
	t.opts.Network, t.opts.Progress = "tcp", nil
	return t, nil
}

// close stops the servers and rolls back whatever a trial left applied.
func (t *localTarget) close() {
	for _, s := range t.servers {
		s.admin.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	defer cancel()
	t.host.Close(ctx)
}

// measure runs the workload once, and once more when a run measured
// nothing or had failed requests (a host so busy that no reply came in
// the run's time): the second answer stands.
func (t *localTarget) measure(ctx context.Context, addr string) (float64, error) {
	var err error
	opts := t.opts
	opts.Addr = addr
	for range 2 {
		sum, rerr := bench.Run(ctx, opts, t.test, nil)
		switch {
		case rerr != nil:
			return 0, rerr
		case sum.Errors > 0:
			err = fmt.Errorf("%d requests failed in the measurement", sum.Errors)
		case sum.RPS <= 0 || t.p99 && sum.Latency.P99 <= 0:
			err = errors.New("the measurement completed no request")
		case t.p99:
			return sum.Latency.P99, nil
		default:
			return sum.RPS, nil
		}
	}
	return 0, err
}

func (t *localTarget) apply(ctx context.Context, plan *tune.Plan, redis *remote.RedisTarget) (string, error) {
	res, err := t.host.TuneApply(ctx, plan, redis, serverhost.Scoped)
	if res == nil {
		return "", err
	}
	return res.Session, err
}

// rollback restores one trial's session, with a context of its own: an
// interrupted session still rolls back.
func (t *localTarget) rollback(session string) error {
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	defer cancel()
	_, err := t.host.TuneRollback(ctx, remote.TuneRollbackArgs{Session: session})
	return err
}
