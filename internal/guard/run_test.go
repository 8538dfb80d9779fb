package guard

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/redistest"
)

// fastOptions watch s with short ticks, so a test takes seconds. The
// latency floor is out of reach: the machine's load (other tests) moves
// the probe's p99, and these tests are about the other rules and the
// journal (TestFalseTripRate is the latency rule's).
func fastOptions(s *redisserver.Server) Options {
	th := DefaultThresholds()
	th.LatencyFloor = time.Minute
	return Options{
		Monitor:  MonitorOptions{Redis: redisadmin.Options{Addr: s.Addr()}, ProbeRate: 200, Interval: 200 * time.Millisecond},
		Baseline: 2 * time.Second, Window: 6 * time.Second, Thresholds: th,
	}
}

// setLoad writes keys to s until ctx ends, counting the OOM replies.
func setLoad(ctx context.Context, t *testing.T, s *redisserver.Server, ooms *atomic.Int64) {
	c := redistest.Client(t, s)
	go func() {
		for i := 0; ctx.Err() == nil; i++ {
			if v, err := c.Do(ctx, "SET", fmt.Sprintf("k%d", i%1000), "v"); (err != nil || v.IsError()) && ctx.Err() == nil {
				ooms.Add(1)
			}
			time.Sleep(time.Millisecond)
		}
	}()
}

func configActions(t *testing.T, s *redisserver.Server, name, value string) (Actions, *atomic.Int32) {
	c := redistest.Client(t, s)
	var rolled atomic.Int32
	old := redistest.Do(t, c, "CONFIG", "GET", name).Elems[1].Str
	return Actions{
		Apply: func(ctx context.Context) (string, error) {
			_, err := c.Do(ctx, "CONFIG", "SET", name, value)
			return "s1", err
		},
		Rollback: func(ctx context.Context, session string) (string, error) {
			rolled.Add(1)
			_, err := c.Do(ctx, "CONFIG", "SET", name, old)
			return "restored " + name, err
		},
		Sessions: func(context.Context, time.Time) ([]string, error) { return []string{"s1"}, nil },
	}, &rolled
}

// TestRunTripsOnErrors: a change that makes the server refuse writes
// (maxmemory 1 byte under noeviction) trips the errors rule within the
// window, is rolled back, and the state says so.
func TestRunTripsOnErrors(t *testing.T) {
	s := redistest.Start(t, "maxmemory-policy noeviction")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var ooms atomic.Int64
	setLoad(ctx, t, s, &ooms)
	a, rolled := configActions(t, s, "maxmemory", "1")
	claim, err := NewClaim(t.TempDir(), &State{Plan: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer claim.Release()
	o := fastOptions(s)
	o.Window = time.Minute // the trip ends it long before
	v, err := Run(ctx, claim, o, a)
	if !errors.Is(err, ErrTripped) {
		t.Fatalf("Run = %v, want ErrTripped (OOM replies %d)", err, ooms.Load())
	}
	if rolled.Load() != 1 || v.State.Phase != PhaseRolledBack || len(v.Trips) == 0 || v.Trips[0].Rule != "errors" {
		t.Fatalf("rolled back %d times, phase %s, trips %v", rolled.Load(), v.State.Phase, v.Trips)
	}
	states, alive, err := ReadStates(claimDir(claim))
	if err != nil || len(states) != 1 || states[0].Phase != PhaseRolledBack || alive[0] {
		t.Fatalf("journaled states %+v alive %v (%v)", states, alive, err)
	}
}

func claimDir(c *Claim) string { return c.dir[:len(c.dir)-len(SubDir)-1] }

// TestRunKeepsNeutral: a change that does not hurt (hz 10 -> 11) is kept
// when the window ends.
func TestRunKeepsNeutral(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	a, rolled := configActions(t, s, "hz", "11")
	claim, err := NewClaim(t.TempDir(), &State{})
	if err != nil {
		t.Fatal(err)
	}
	defer claim.Release()
	v, err := Run(ctx, claim, fastOptions(s), a)
	if err != nil || !v.Kept() || rolled.Load() != 0 {
		t.Fatalf("Run = %v, phase %s, rolled back %d times, trips %v", err, v.State.Phase, rolled.Load(), v.Trips)
	}
	t.Logf("baseline %+v", *v.State.Baseline)
	if v.Requests == 0 || v.INFOs == 0 {
		t.Errorf("the probe's own load is not counted: %d requests, %d INFOs", v.Requests, v.INFOs)
	}
}

// TestResumeOrphan: a guard that died mid-window (its lock free, its
// state "watching") is taken over by the next one, which watches on to
// the window's end (policy watch) or rolls back (policy rollback); a live
// guard's state is not taken.
func TestResumeOrphan(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	for _, policy := range []string{ResumeWatch, ResumeRollback} {
		dir := t.TempDir()
		a, rolled := configActions(t, s, "hz", "11")
		o := fastOptions(s)
		dead, err := NewClaim(dir, &State{Phase: PhaseWatching, Session: "s1", RedisNetwork: "tcp", RedisAddr: s.Addr(),
			Thresholds: o.Thresholds, ProbeRate: 200, Interval: 200 * time.Millisecond, Window: 3 * time.Second,
			Baseline: &Baseline{Ticks: 10, ProbeP99Ms: 1, ProbeP99Q3Ms: 1}, WatchEnds: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		dead.State.WatchEnds = time.Now().Add(2 * time.Second)
		dead.Save()
		live, _ := NewClaim(dir, &State{ID: "live", Phase: PhaseWatching})
		dead.Release() // as kill -9 would
		orphans, err := Orphans(dir)
		if err != nil || len(orphans) != 1 || orphans[0].State.ID != dead.State.ID {
			t.Fatalf("orphans %v (%v), want the dead guard only", orphans, err)
		}
		v, err := Resume(ctx, orphans[0], o, a, policy)
		orphans[0].Release()
		live.Release()
		want := map[string]string{ResumeWatch: PhaseKept, ResumeRollback: PhaseRolledBack}[policy]
		if err != nil || v.State.Phase != want || len(v.State.Resumed) != 1 {
			t.Fatalf("policy %s: %v, phase %s (want %s), resumed %v", policy, err, v.State.Phase, want, v.State.Resumed)
		}
		if (policy == ResumeRollback) != (rolled.Load() == 1) {
			t.Errorf("policy %s rolled back %d times", policy, rolled.Load())
		}
	}
}

// TestRunInterruptedRollsBack: Ctrl-C (ctx cancelled) during the watch
// rolls the change back and says so (ErrInterrupted): an interrupted
// guard leaves nothing unwatched.
func TestRunInterruptedRollsBack(t *testing.T) {
	s := redistest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, rolled := configActions(t, s, "hz", "11")
	claim, err := NewClaim(t.TempDir(), &State{})
	if err != nil {
		t.Fatal(err)
	}
	defer claim.Release()
	o := fastOptions(s)
	o.Window = time.Hour
	o.OnTick = func(e Event) {
		if e.Phase == PhaseWatching {
			cancel()
		}
	}
	v, err := Run(ctx, claim, o, a)
	if !errors.Is(err, ErrInterrupted) || rolled.Load() != 1 || v.State.Phase != PhaseRolledBack {
		t.Fatalf("Run = %v, rolled back %d times, phase %s", err, rolled.Load(), v.State.Phase)
	}
}
