package target

// THE SEAM. This file is redline autotune's host side: the target's
// server started (or attached), and every trial's changes applied scoped
// and rolled back, through the one server-host API (serverhost.Host,
// issue 23); the load is generated here. The host is opened once, by
// the command's openHost (Options.OpenHost, serverhost.Open): this
// machine, or a session over --ssh whose
// dead man's switch undoes a trial by itself when the link dies. Nothing
// else in autotune knows how the host is reached; how one trial's knobs
// reach it is trial.go and methods.go.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"redline/internal/autotune"
	"redline/internal/bench"
	"redline/internal/bench/cmdline"
	"redline/internal/buildspec"
	"redline/internal/netns"
	"redline/internal/redisadmin"
	"redline/internal/serverhost"
	"redline/internal/target/policy"
	"redline/internal/tune"
)

// rollbackTimeout bounds the rollback after a trial, also when the
// session was interrupted, and the host's close.
const rollbackTimeout = 30 * time.Second

// Target is the session's redis-server on its server host (this
// machine, a session's over ssh, or a network namespace here), measured
// with one workload; every trial runs on a server started with its start-up
// settings (the baseline's first: trial.go keeps a pool), its
// changes applied scoped through the host's tune journal and rolled back
// by their session after the measurement.
type Target struct {
	host  serverhost.Host
	addr  string // the baseline server's
	redis *serverhost.RedisTarget
	admin *redisadmin.Conn
	opts  bench.Options
	test  bench.Test
	p99   bool

	// managed: autotune started the server, so start-up knobs can be
	// tried (an attached server keeps its settings).
	managed bool
	start   serverhost.RedisStartArgs // the baseline server's
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
	// clientNetNS is where the load and the admin connections come from
	// (a --netns target's client namespace).
	clientNetNS string
	// cluster is a --cluster target's nodes (cluster.go).
	cluster *clusterNodes
	// noHost says why host knobs cannot be tried ("" when they can).
	noHost string
	pair   *netns.Pair
	where  string // what the target is, for the terminal
	// built are the session's --build binaries by name (build.go),
	// buildTime what building them took.
	built     map[string]buildspec.Provenance
	buildTime time.Duration
	// beforeMeasure, when set (tests), sees the trial's server with
	// everything applied, just before the measurement.
	beforeMeasure func(*trialServer)
}

// Open opens the server host (its journal in o.StateDir, held from the
// first trial) through o.OpenHost: this machine, a session over --ssh, or
// this machine seen from a network namespace pair (--netns); it takes the
// redis-servers already running there (the production-host guard), starts
// the managed server with its extra redis.conf lines or attaches the
// existing one, and aims the workload wl at it.
func Open(ctx context.Context, o Options, wl cmdline.Workload) (*Target, error) {
	tg := o.Spec
	t := &Target{test: wl.Tests[0], p99: tg.Objective == "p99", managed: !tg.Attached() && !tg.Cluster,
		start: serverhost.RedisStartArgs{Config: tg.ServerConfig}, servers: map[string]*trialServer{}, profilePlans: map[string]*tune.Plan{}}
	local := serverhost.LocalOptions{StateDir: o.StateDir, Holder: "redline autotune", BuildProgress: o.BuildProgress}
	if tg.NetNS {
		netns.RemoveStale()
		p, err := netns.NewPair(ctx)
		if err != nil {
			return nil, fmt.Errorf("--netns: %w", err)
		}
		t.pair, t.serverNetNS, t.clientNetNS = p, p.Server, p.Client
		local.NetNS, local.ClientNetNS = p.Server, p.Client
	}
	h, err := o.openHost(ctx, local)
	if err != nil {
		t.Close()
		return nil, err
	}
	t.host = h
	if err := t.open(ctx, o); err != nil {
		t.Close()
		return nil, err
	}
	if t.noHost == "" && h.Info().UID != 0 {
		t.noHost = "writes the host: needs root" + onHost(h.Info())
	}
	t.opts = wl.Options
	t.opts.Network, t.opts.NetNS, t.opts.Progress = cmp.Or(t.redis.Network, "tcp"), t.clientNetNS, nil
	t.opts.User, t.opts.Password = t.redis.User, t.redis.Password
	t.opts.Cluster = tg.Cluster
	return t, nil
}

// open starts the managed server (the pool's baseline: on the address
// the load reaches, the ssh connection's or the namespace's) or attaches
// the existing one, the guard having taken the other servers there first.
func (t *Target) open(ctx context.Context, o Options) error {
	tg, info := o.Spec, t.host.Info()
	if tg.Cluster {
		return t.openCluster(ctx, o)
	}
	others := policy.OtherServers("/")
	if !t.managed {
		pid, err := t.attach(ctx, o)
		if err != nil {
			return err
		}
		// The attached server is not one of the others the guard protects.
		others = slices.DeleteFunc(others, func(o string) bool { return pid > 0 && o == "pid "+strconv.Itoa(pid) })
	}
	t.guard(others, tg.AllowHostWide)
	if !t.managed {
		return nil
	}
	var nsIP string
	if t.pair != nil {
		nsIP = t.pair.ServerIP
	}
	bind, err := policy.Bind(nsIP, info.SSH, info.SSHServerIP, "", "autotune over --ssh needs it")
	if err != nil {
		return err
	}
	// The load comes from another host: the server gets a password of
	// its own, never protected-mode off (as the lab's ssh target).
	t.start.Bind, t.start.Password = bind, policy.Password(info.SSH != "", "")
	srv, err := t.server(ctx, t.start)
	if err != nil {
		return err
	}
	t.addr, t.redis, t.admin = srv.addr, srv.redis, srv.admin
	t.where = "a managed redis-server at " + t.addr + onHost(info)
	if t.pair != nil {
		t.where += " in network namespace " + t.pair.Server
	}
	return t.resolveCPUs(ctx)
}

// attach takes the existing server as the pool's one server.
func (t *Target) attach(ctx context.Context, o Options) (pid int, err error) {
	tg := o.Spec
	r := &serverhost.RedisTarget{Addr: cmp.Or(tg.Addr, tg.Socket), User: tg.User, Password: o.Password}
	if tg.Socket != "" {
		r.Network = "unix"
	}
	return t.attachServer(ctx, r)
}

// attachServer takes the server at r as the pool's one server (the
// baseline's, never started or stopped; a cluster's seed): its CONFIG is
// tuned, and its host when it is a process of the server host (pid, 0
// when not).
func (t *Target) attachServer(ctx context.Context, r *serverhost.RedisTarget) (pid int, err error) {
	t.addr, t.redis = r.Addr, r
	t.where = "the existing redis-server at " + t.addr + onHost(t.host.Info())
	a, aerr := t.host.RedisAttach(ctx, *r)
	if aerr != nil {
		// Reachable from here perhaps, but not a process of the server
		// host: its CONFIG can be tuned, not its host.
		t.noHost = fmt.Sprintf("the server is not a process of the server host (%v)", aerr)
	}
	admin, err := redisadmin.Dial(ctx, redisadmin.Options{Network: r.Network, Addr: r.Addr, Username: r.User, Password: r.Password, NetNS: t.clientNetNS})
	if err != nil {
		return 0, err
	}
	b, _ := json.Marshal(t.start)
	srv := &trialServer{key: string(b), addr: t.addr, pid: a.Pid, redis: r, admin: admin}
	t.servers[srv.key], t.admin = srv, admin
	return a.Pid, nil
}

// close stops the servers and rolls back whatever a trial left applied.
func (t *Target) Close() {
	for _, s := range t.servers {
		if s.cluster == nil || s.cluster == t.cluster {
			s.admin.Close()
		}
	}
	if t.host != nil {
		ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
		defer cancel()
		t.host.Close(ctx)
	}
	// A cluster's nodes after the host's close, whose rollback needs them.
	for _, s := range t.servers {
		if s.cluster != nil && s.cluster != t.cluster {
			s.cluster.close()
		}
	}
	if t.cluster != nil {
		t.cluster.close()
	}
	if t.pair != nil {
		t.pair.Remove()
	}
}

// measure runs the workload once, and once more when a run measured
// nothing or had failed requests (a host so busy that no reply came in
// the run's time): the second answer stands. P99 is in milliseconds.
func (t *Target) measure(ctx context.Context, addr string) (autotune.Measurement, error) {
	var err error
	opts := t.opts
	opts.Addr = addr
	for range 2 {
		sum, rerr := bench.Run(ctx, opts, t.test, nil)
		switch {
		case rerr != nil:
			return autotune.Measurement{}, rerr
		case sum.Errors > 0:
			err = fmt.Errorf("%d requests failed in the measurement", sum.Errors)
		case sum.RPS <= 0 || sum.Latency.P99 <= 0:
			err = errors.New("the measurement completed no request")
		case t.p99:
			return autotune.Measurement{Value: sum.Latency.P99, P99: sum.Latency.P99}, nil
		default:
			return autotune.Measurement{Value: sum.RPS, P99: sum.Latency.P99}, nil
		}
	}
	return autotune.Measurement{}, err
}

func (t *Target) applyScoped(ctx context.Context, plan *tune.Plan, redis *serverhost.RedisTarget) (string, error) {
	res, err := t.host.TuneApply(ctx, plan, redis, serverhost.Scoped)
	if res == nil {
		return "", err
	}
	return res.Session, err
}

// rollback restores one trial's session, with a context of its own: an
// interrupted session still rolls back.
func (t *Target) rollback(session string, redis *serverhost.RedisTarget) error {
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	defer cancel()
	_, err := t.host.TuneRollback(ctx, serverhost.TuneRollbackArgs{Session: session, RedisPassword: redis.Password})
	return err
}
