package lab

import (
	"context"
	"strings"
	"sync"
	"testing"

	"redline/internal/labdata"
	"redline/internal/testutil"
)

// fakeSteerer records what the lab asks of steer: when a session starts
// and stops is the lab's policy, whatever steer does.
type fakeSteerer struct {
	mu             sync.Mutex
	starts, stops  int
	active         bool
	stopCtxOff     bool // a Stop was given a cancelled context
	runsWhileOn    int  // runs of the steer variant measured with a session on
	runsWhileOnBad int  // runs of another variant measured with a session on
}

func (f *fakeSteerer) Start(ctx context.Context, spec labdata.SteerSpec, env Env) (SteerSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts++
	f.active = true
	return fakeSteerSession{f}, nil
}

type fakeSteerSession struct{ f *fakeSteerer }

func (s fakeSteerSession) Stop(ctx context.Context) (labdata.SteerSession, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stops++
	f.active = false
	f.stopCtxOff = f.stopCtxOff || ctx.Err() != nil
	return labdata.SteerSession{Periods: 3, Moves: []labdata.SteerMove{{IRQ: 30, Queue: "eth0 rx-0", From: "0", To: 1}},
		Restored: "1 IRQ affinities restored, 0 left alone (changed by someone else)"}, nil
}

func (f *fakeSteerer) observe(e Event) {
	if e.Summary == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.active && e.Variant == "steer":
		f.runsWhileOn++
	case f.active:
		f.runsWhileOnBad++
	}
}

func steerScenario(t *testing.T) labdata.Scenario {
	s := tunedScenario(t)
	s.Variants[1] = labdata.VariantSpec{Name: "steer", Steer: &labdata.SteerSpec{}}
	return s
}

// TestLabSteerSessions: a steer variant has steer on for its runs and
// only for them, one session per round, each recorded; cancelling in the
// middle of the variant still stops (and so restores) it.
func TestLabSteerSessions(t *testing.T) {
	t.Parallel() // waits on its own servers
	testutil.Heavy(t)
	t.Run("complete", func(t *testing.T) {
		f := &fakeSteerer{}
		res, err := Execute(context.Background(), Options{Scenario: steerScenario(t), Steerer: f, Observer: f.observe})
		if err != nil {
			t.Fatal(err)
		}
		if f.starts != 2 || f.stops != 2 || f.active {
			t.Errorf("%d starts, %d stops, still on %v: want a session per round, all stopped", f.starts, f.stops, f.active)
		}
		if f.runsWhileOn != 4 || f.runsWhileOnBad != 0 {
			t.Errorf("steer on during %d of steer's 4 runs and %d of the baseline's", f.runsWhileOn, f.runsWhileOnBad)
		}
		v := res.Variants[1]
		if len(v.Steer) != 2 || v.Steer[0].Rep != 1 || v.Steer[1].Rep != 2 || v.Steer[0].Finished.IsZero() || len(v.Steer[0].Moves) != 1 {
			t.Errorf("steer sessions recorded: %+v", v.Steer)
		}
		if !strings.Contains(v.Description, "redline steer") {
			t.Errorf("description %q", v.Description)
		}
	})
	t.Run("cancelled mid-variant", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		f := &fakeSteerer{}
		res, err := Execute(ctx, Options{Scenario: steerScenario(t), Steerer: f, Observer: func(e Event) {
			f.observe(e)
			if e.Summary != nil && e.Variant == "steer" {
				cancel()
			}
		}})
		if err == nil {
			t.Fatal("no error after a cancel")
		}
		if f.starts != 1 || f.stops != 1 || f.active || f.stopCtxOff {
			t.Errorf("%d starts, %d stops, still on %v, stop given a cancelled ctx %v", f.starts, f.stops, f.active, f.stopCtxOff)
		}
		if len(res.Variants[1].Steer) != 1 {
			t.Errorf("the interrupted session is not recorded: %+v", res.Variants[1].Steer)
		}
	})
}

// A steer variant without a Steerer, or a steering baseline, is refused
// before anything runs.
func TestLabSteerRefused(t *testing.T) {
	if _, err := Execute(context.Background(), Options{Scenario: steerScenario(t)}); err == nil || !strings.Contains(err.Error(), "variant steer steers, but steer is not available") {
		t.Errorf("no steerer: %v", err)
	}
	_, err := ParseScenario([]byte(`
name: x
target: {kind: managed}
workloads: [{name: w, bench: -t get -n 10}]
variants:
  - {name: b, baseline: true, steer: {}}
  - {name: s, steer: {sample: 3, majority: 40%, domain: cache}}
`))
	_, sshErr := ParseScenario([]byte(`
name: x
target: {kind: ssh, host: redis-a}
workloads: [{name: w, bench: -t get -n 10}]
variants:
  - {name: b, baseline: true}
  - {name: s, steer: {}}
`))
	if sshErr != nil {
		t.Errorf("steer with an ssh target (steered on the server host through its session): %v", sshErr)
	}
	for _, want := range []string{"variants.0.steer: the baseline variant cannot steer", "variants.1.steer.sample: 3", "variants.1.steer.majority: 0.4", `variants.1.steer.domain: "cache": want node or llc`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}
