package tune

import (
	"path/filepath"
	"redline/internal/testutil"
	"testing"

	"redline/internal/change"
	"redline/internal/host"
)

// fixtureRoot is the repository's fixture trees (testdata/hosts/NAME).
const fixtureRoot = "../../testdata/hosts"

// fixtures names the trees and how to plan on each: every host profile,
// with the Redis pid where the tree holds several servers.
var fixtures = []struct {
	name     string
	in       PlanInput
	profiles []string
}{
	{"local-virtio-2cpu", PlanInput{}, []string{"irq-local", "rps-xps", "net-sysctl", "memory"}},
	{"kvm-virtio-multiqueue", PlanInput{}, []string{"irq-local", "numa-bind", "rps-xps", "net-sysctl", "memory"}},
	{"x86-2socket-mlx5", PlanInput{PID: 31337}, []string{"irq-local", "numa-bind", "rps-xps", "net-sysctl", "memory"}},
	{"kunpeng920-4node-hinic", PlanInput{}, []string{"irq-local", "numa-bind", "rps-xps", "net-sysctl", "memory"}},
}

// fixturePlan reads the copied tree with host.Read and plans on it.
func fixturePlan(t testing.TB, root string, in PlanInput, profiles []string) *Plan {
	t.Helper()
	fsys, err := host.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	opts := host.Options{}
	if in.PID != 0 {
		opts.PIDs = []int{in.PID}
	}
	snap, err := host.Read(fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	in.Host = snap
	p, err := PlanProfiles(in, profiles...)
	if err != nil {
		t.Fatalf("plan on %s: %v", root, err)
	}
	return p
}

// TestFixtureTreesApplyRollback plans every host profile on a copy of each
// fixture tree, applies it, and requires the tree byte-identical after the
// rollback.
func TestFixtureTreesApplyRollback(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			t.Parallel()
			root := testutil.CopyTree(t, filepath.Join(fixtureRoot, fx.name))
			orig := snapshot(t, root)
			p := fixturePlan(t, root, fx.in, fx.profiles)
			state := t.TempDir()
			res, err := Apply(bg, RehearsalSystem(root), p, ApplyOptions{StateDir: state})
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			applied := res.Count(StatusApplied)
			if applied == 0 || res.Count(StatusFailed) != 0 {
				t.Fatalf("applied %d of %d: %+v", applied, len(p.Changes), res.Outcomes)
			}
			for _, o := range res.Outcomes {
				// Only what needs the live host may be refused here.
				if o.Status == StatusRefused && o.Change.Kind != change.KindAffinity && o.Change.Kind != change.KindService {
					t.Errorf("%s refused on the fixture: %s", o.Change.Key(), o.Reason)
				}
			}
			if snapshotEqual(orig, snapshot(t, root)) {
				t.Fatal("the apply changed nothing in the tree")
			}
			rb, err := Rollback(bg, RollbackOptions{StateDir: state})
			if err != nil || rb.Count(StatusRestored) != applied || !rb.Archived {
				t.Fatalf("rollback: restored %d of %d, %v", rb.Count(StatusRestored), applied, err)
			}
			requireSame(t, orig, snapshot(t, root), fx.name)
		})
	}
}

// TestFixtureKillEveryStep kills a profile plan's apply after every step
// on a fixture tree, at a phase that varies with the step, and rolls back:
// byte-identical every time. The tree is copied once: each iteration must
// leave it as it found it, which is what is asserted.
func TestFixtureKillEveryStep(t *testing.T) {
	testutil.Heavy(t)
	fx := fixtures[1] // kvm-virtio-multiqueue: IRQs, masks, sysctls, THP
	root := testutil.CopyTree(t, filepath.Join(fixtureRoot, fx.name))
	orig := snapshot(t, root)
	p := fixturePlan(t, root, fx.in, fx.profiles)
	if len(p.Changes) < 20 {
		t.Fatalf("plan has only %d changes", len(p.Changes))
	}
	for step := 1; step <= len(p.Changes); step++ {
		at := phase(step % int(phases))
		state := t.TempDir()
		_, err := Apply(bg, RehearsalSystem(root), p, ApplyOptions{StateDir: state, hook: func(k int, ph phase) bool {
			return k == step && ph == at
		}})
		refusedStep := p.Changes[step-1].Kind == change.KindAffinity || p.Changes[step-1].Kind == change.KindService
		if err != errKilled && !refusedStep {
			t.Fatalf("step %d: apply was not killed: %v", step, err)
		}
		if _, err := Rollback(bg, RollbackOptions{StateDir: state}); err != nil {
			t.Fatalf("step %d: rollback: %v", step, err)
		}
		requireSame(t, orig, snapshot(t, root), "kill at step "+p.Changes[step-1].Key())
	}
}

func snapshotEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
