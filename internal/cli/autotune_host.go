package cli

// THE SEAM. This file is redline autotune's host side for a managed local
// redis-server, written on the local APIs (redisserver, tune, bench) until
// the one server-host API of issue 23 lands: then starting the server,
// the scoped tune apply and rollback, and the measurement move onto it
// (local or over the session) and this file shrinks to an
// autotune.Trialer over that API. Nothing else in autotune knows how the
// host is reached.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"redline/internal/autotune"
	"redline/internal/bench"
	"redline/internal/bench/cmdline"
	"redline/internal/change"
	"redline/internal/knobs"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/tune"
)

// rollbackTimeout bounds the rollback after a trial, also when the
// session was interrupted.
const rollbackTimeout = 30 * time.Second

// localTarget is a redis-server redline starts, measured with one
// workload; every trial's changes are applied through tune's journal in
// stateDir and rolled back by their session after the measurement.
type localTarget struct {
	srv      *redisserver.Server
	admin    *redisadmin.Conn
	stateDir string
	opts     bench.Options
	test     bench.Test
	p99      bool
}

// startLocalTarget starts the server with its extra redis.conf lines and
// aims the workload at it.
func startLocalTarget(ctx context.Context, config []string, wl cmdline.Workload, p99 bool, stateDir string) (*localTarget, error) {
	srv, err := redisserver.Start(ctx, redisserver.Options{Config: config})
	if err != nil {
		return nil, err
	}
	admin, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: srv.Addr()})
	if err != nil {
		srv.Stop()
		return nil, err
	}
	o := wl.Options
	o.Network, o.Addr, o.Progress = "tcp", srv.Addr(), nil
	return &localTarget{srv: srv, admin: admin, stateDir: stateDir, opts: o, test: wl.Tests[0], p99: p99}, nil
}

func (t *localTarget) close() {
	t.admin.Close()
	t.srv.Stop()
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
	plan.Redis = &tune.PlanRedis{Addr: t.srv.Addr()}
	sys := tune.LiveSystem()
	sys.Redis = tune.RedisOptions{Addr: t.srv.Addr()}
	defer sys.Close()
	res, err := tune.Apply(ctx, sys, plan, tune.ApplyOptions{StateDir: t.stateDir})
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
	_, err := tune.Rollback(ctx, tune.RollbackOptions{StateDir: t.stateDir, Session: session})
	return err
}
