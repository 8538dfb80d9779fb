package tune

import (
	"context"
	"redline/internal/testutil"
	"strings"
	"testing"

	"redline/internal/change"
)

// memServices is a service manager in memory: the journal and rollback
// logic of service changes, tested without systemd (this VM has none).
type memServices map[string]string

func (m memServices) State(_ context.Context, unit string) (string, error) {
	st, ok := m[unit]
	if !ok {
		return "", refuse(unit+" is not installed", nil)
	}
	return st, nil
}

func (m memServices) Set(_ context.Context, unit, state string) error {
	m[unit] = state
	return nil
}

func TestServiceStopAndRestart(t *testing.T) {
	s, _, _ := rehearsal(t)
	svc := memServices{"irqbalance": "active"}
	s.Services = svc
	state := t.TempDir()
	p := &Plan{Version: 1, Changes: []change.Change{
		{Kind: change.KindService, Target: "irqbalance", Value: "inactive"},
		{Kind: change.KindFile, Target: "/proc/irq/24/smp_affinity_list", Value: "3"},
		{Kind: change.KindService, Target: "tuned", Value: "inactive"},
	}}
	res, err := Apply(bg, s, p, ApplyOptions{StateDir: state})
	if err != nil || res.Count(StatusApplied) != 2 || svc["irqbalance"] != "inactive" {
		t.Fatalf("apply: %+v %v %v", res.Outcomes, svc, err)
	}
	if res.Outcomes[2].Status != StatusRefused || !strings.Contains(res.Outcomes[2].Reason, "not installed") {
		t.Errorf("a missing unit: %+v", res.Outcomes[2])
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state, System: s}); err != nil {
		t.Fatal(err)
	}
	if svc["irqbalance"] != "active" {
		t.Errorf("irqbalance is %s after rollback", svc["irqbalance"])
	}
}

// Without systemd tune sees a running irqbalance but will not guess how to
// stop it: report-only, with the command to run.
func TestProcessOnlyServices(t *testing.T) {
	files := map[string]string{"proc/800/comm": "irqbalance\n", "proc/1/comm": "init\n", "proc/self/comm": "x\n"}
	for k, v := range smallHost {
		files[k] = v
	}
	root := testutil.WriteTree(t, files)
	s := RehearsalSystem(root)
	s.Services = ProcessOnly{Proc: OSFS{Root: root}}
	outs, err := Preview(bg, s, &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindService, Target: "irqbalance", Value: "inactive"}}})
	if err != nil {
		t.Fatal(err)
	}
	if outs[0].Status != StatusRefused || outs[0].Old != "active" || !strings.Contains(outs[0].Reason, "service irqbalance stop") {
		t.Fatalf("irqbalance without systemd: %+v", outs[0])
	}
	// Already stopped: nothing to do, nothing refused.
	outs, _ = Preview(bg, s, &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindService, Target: "tuned", Value: "inactive"}}})
	if outs[0].Status != StatusUnchanged {
		t.Fatalf("a service that is not running: %+v", outs[0])
	}
}

func TestWarningIrqbalanceRunning(t *testing.T) {
	files := map[string]string{"proc/800/comm": "irqbalance\n"}
	for k, v := range smallHost {
		files[k] = v
	}
	s := RehearsalSystem(testutil.WriteTree(t, files))
	p := &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindFile, Target: "/proc/irq/24/smp_affinity_list", Value: "1"}}}
	if w := Warnings(s, p); len(w) != 1 || !strings.Contains(w[0], "pid 800") {
		t.Fatalf("warnings: %q", w)
	}
	p.Changes = append([]change.Change{{Kind: change.KindService, Target: "irqbalance", Value: "inactive"}}, p.Changes...)
	if w := Warnings(s, p); len(w) != 0 {
		t.Fatalf("warned although the plan stops irqbalance: %q", w)
	}
}
