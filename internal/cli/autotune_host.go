package cli

// THE SEAM. This file is redline autotune's host side: a managed
// redis-server started, and every trial's changes applied scoped and
// rolled back, through the one server-host API (serverhost.Host, issue
// 23); the load is generated here. The host is opened locally
// (serverhost.NewLocal); a server host over --ssh is serverhost.Open with
// a Dial, not wired yet. Nothing else in autotune knows how the host is
// reached.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"redline/internal/autotune"
	"redline/internal/bench"
	"redline/internal/bench/cmdline"
	"redline/internal/change"
	"redline/internal/knobs"
	"redline/internal/redisadmin"
	"redline/internal/remote"
	"redline/internal/serverhost"
	"redline/internal/tune"
)

// rollbackTimeout bounds the rollback after a trial, also when the
// session was interrupted, and the host's close.
const rollbackTimeout = 30 * time.Second

// localTarget is a redis-server started on the host, measured with one
// workload; every trial's changes are applied scoped through the host's
// tune journal and rolled back by their session after the measurement.
type localTarget struct {
	host  serverhost.Host
	addr  string
	redis *remote.RedisTarget
	admin *redisadmin.Conn
	opts  bench.Options
	test  bench.Test
	p99   bool
}

// startLocalTarget opens this machine as the server host (its journal in
// stateDir, held from the first trial), starts the server with its extra
// redis.conf lines and aims the workload at it.
func startLocalTarget(ctx context.Context, config []string, wl cmdline.Workload, p99 bool, stateDir string) (*localTarget, error) {
	h := serverhost.NewLocal(serverhost.LocalOptions{StateDir: stateDir, Holder: "redline autotune"})
	t := &localTarget{host: h, test: wl.Tests[0], p99: p99}
	srv, err := h.RedisStart(ctx, remote.RedisStartArgs{Config: config})
	if err != nil {
		t.close()
		return nil, err
	}
	t.addr = net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port))
	t.redis = &remote.RedisTarget{Addr: t.addr}
	if t.admin, err = redisadmin.Dial(ctx, redisadmin.Options{Addr: t.addr}); err != nil {
		t.close()
		return nil, err
	}
	t.opts = wl.Options
	t.opts.Network, t.opts.Addr, t.opts.Progress = "tcp", t.addr, nil
	return t, nil
}

// close stops the server and rolls back whatever a trial left applied.
func (t *localTarget) close() {
	if t.admin != nil {
		t.admin.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	defer cancel()
	t.host.Close(ctx)
}

// untried drops the values a knob already has on the target (a
// comparison of the target with itself); ok is false when none is left.
// Only Redis settings are read here; the others are tried as listed.
func (t *localTarget) untried(ctx context.Context, c autotune.Candidate) (autotune.Candidate, string, bool) {
	k, _ := knobs.Lookup(c.Knob)
	ch, ok := k.Change("")
	if !ok || k.Kind != knobs.KindRedisConfig {
		return c, "", true
	}
	cfg, err := t.admin.ConfigGet(ctx, k.Target)
	cur, found := cfg[k.Target]
	if err != nil || !found {
		return c, "", true
	}
	var left []string
	for _, v := range c.Values {
		if !ch.Same(v, cur) {
			left = append(left, v)
		}
	}
	c.Values = left
	return c, cur, len(left) > 0
}

// changesOf maps a config onto the catalog's changes.
func changesOf(c autotune.Config) ([]change.Change, error) {
	var out []change.Change
	for _, s := range c {
		k, ok := knobs.Lookup(s.Knob)
		if !ok {
			return nil, fmt.Errorf("no knob %s in the catalog", s.Knob)
		}
		ch, ok := k.Change(s.Value)
		if !ok {
			return nil, fmt.Errorf("knob %s is applied by %s, which this target cannot do yet", k.Name, k.Method())
		}
		out = append(out, ch)
	}
	return out, nil
}

// Trial applies c scoped, measures once and rolls back.
func (t *localTarget) Trial(ctx context.Context, c autotune.Config) (v float64, err error) {
	changes, err := changesOf(c)
	if err != nil {
		return 0, err
	}
	if len(changes) > 0 {
		session, err := t.apply(ctx, changes)
		if session != "" {
			defer func() {
				if rerr := t.rollback(session); rerr != nil && err == nil {
					err = rerr
				}
			}()
		}
		if err != nil {
			return 0, err
		}
	}
	if _, err := t.admin.Do(ctx, "FLUSHALL"); err != nil {
		return 0, fmt.Errorf("FLUSHALL: %w", err)
	}
	return t.measure(ctx)
}

// measure runs the workload once, and once more when a run measured
// nothing or had failed requests (a host so busy that no reply came in
// the run's time): the second answer stands.
func (t *localTarget) measure(ctx context.Context) (float64, error) {
	var err error
	for range 2 {
		sum, rerr := bench.Run(ctx, t.opts, t.test, nil)
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

func (t *localTarget) apply(ctx context.Context, changes []change.Change) (string, error) {
	plan := tune.FromChanges(changes, "autotune")
	plan.Redis = &tune.PlanRedis{Addr: t.addr}
	res, err := t.host.TuneApply(ctx, plan, t.redis, serverhost.Scoped)
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
