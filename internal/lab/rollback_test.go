package lab

import (
	"context"
	"errors"
	"redline/internal/testutil"
	"strings"
	"sync"
	"testing"

	"redline/internal/bench"
	"redline/internal/benchdata"
	"redline/internal/change"
	"redline/internal/labdata"
)

// fakeTuner records what the lab asks of a tuner: the rollback policy is
// the lab's, whatever the tuner does.
type fakeTuner struct {
	mu                  sync.Mutex
	applies, rollbacks  int
	active              bool
	rollbackCtxCanceled bool
	failApply           bool // apply one change, then fail
}

var fakeStep = labdata.PlanStep{Change: change.Change{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: "4096"}, Old: "128", Status: "applied"}

func (f *fakeTuner) Apply(ctx context.Context, spec labdata.TuneSpec, env Env) ([]labdata.PlanStep, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applies++
	f.active = true
	if f.failApply {
		refused := fakeStep
		refused.Change.Target, refused.Status = "net.ipv4.tcp_max_syn_backlog", "refused"
		return []labdata.PlanStep{fakeStep, refused}, errors.New("net.ipv4.tcp_max_syn_backlog: permission denied")
	}
	return []labdata.PlanStep{fakeStep}, nil
}

func (f *fakeTuner) Rollback(ctx context.Context, env Env) ([]labdata.PlanStep, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rollbacks++
	f.active = false
	f.rollbackCtxCanceled = f.rollbackCtxCanceled || ctx.Err() != nil
	restored := fakeStep
	restored.Status = "restored"
	return []labdata.PlanStep{restored}, nil
}

func (f *fakeTuner) isActive() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.active
}

type fakeDoctor struct{}

func (fakeDoctor) Diagnose(context.Context, Env) ([]labdata.Finding, Fixes, error) {
	return nil, Fixes{}, nil
}

// tunedScenario is a baseline and one tuned variant of two tests each.
func tunedScenario(t *testing.T) labdata.Scenario {
	s := tiny(t, "managed")
	no := false
	s.Doctor = &no
	s.Workloads[0].Bench = "redis-benchmark -t set,get -c 4 -n 2000 -r 1000 -q"
	s.Variants = []labdata.VariantSpec{s.Variants[0], {Name: "tuned", Tune: &labdata.TuneSpec{Profiles: []string{"fake"}}}}
	s.Repetitions = 2
	return s
}

// TestLabAlwaysRollsBack: whether the user cancels in the middle of a
// variant, applying fails partway or a run fails, every Apply is followed
// by a Rollback that ctx's cancellation does not stop, and the result says
// the variant was rolled back.
func TestLabAlwaysRollsBack(t *testing.T) {
	testutil.Heavy(t)
	cases := []struct {
		name    string
		setup   func(f *fakeTuner, cancel context.CancelFunc) Options
		wantErr string
	}{
		{"cancelled mid-variant", func(f *fakeTuner, cancel context.CancelFunc) Options {
			return Options{Observer: func(e Event) {
				if e.Summary != nil && e.Variant == "tuned" {
					cancel()
				}
			}}
		}, "context canceled"},
		{"apply fails partway", func(f *fakeTuner, _ context.CancelFunc) Options {
			f.failApply = true
			return Options{}
		}, "variant tuned: apply: net.ipv4.tcp_max_syn_backlog: permission denied"},
		{"a run fails", func(f *fakeTuner, _ context.CancelFunc) Options {
			failWhileTuned(t, f)
			return Options{}
		}, "under tuned (repetition 1): connection reset"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			f := &fakeTuner{}
			o := c.setup(f, cancel)
			o.Scenario, o.Tuner, o.Doctor = tunedScenario(t), f, fakeDoctor{}
			res, err := Execute(ctx, o)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v, want %q", err, c.wantErr)
			}
			if f.applies != 1 || f.rollbacks != 1 || f.active {
				t.Errorf("%d applies, %d rollbacks, still applied %v: want one of each", f.applies, f.rollbacks, f.active)
			}
			if c.name == "cancelled mid-variant" && countRuns(res, "tuned") != 1 {
				t.Errorf("%d runs of tuned: the cancel came after its first test and should stop it", countRuns(res, "tuned"))
			}
			if f.rollbackCtxCanceled {
				t.Error("the rollback was given a cancelled context")
			}
			if v := res.Variants[1]; !v.RolledBack || len(v.Plan) == 0 || res.Complete {
				t.Errorf("variant %+v, complete %v: want it recorded with its plan and rolled back", v, res.Complete)
			}
		})
	}
}

// failWhileTuned makes every run fail while f has changes applied.
func failWhileTuned(t *testing.T, f *fakeTuner) {
	real := runBench
	runBench = func(ctx context.Context, o bench.Options, tt bench.Test, data []byte) (*benchdata.Summary, error) {
		if f.isActive() {
			return nil, errors.New("connection reset")
		}
		return real(ctx, o, tt, data)
	}
	t.Cleanup(func() { runBench = real })
}

func countRuns(res *labdata.Result, variant string) int {
	n := 0
	for _, r := range res.Runs {
		if r.Variant == variant {
			n++
		}
	}
	return n
}
