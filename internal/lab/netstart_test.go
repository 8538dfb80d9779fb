package lab

import (
	"context"
	"os"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// startTuner is a Tuner that can only set a namespace's starting state,
// through tune as the CLI's does; its state directory is the test's.
type startTuner struct {
	fakeTuner
	state string
}

func (s *startTuner) StartNetNS(ctx context.Context, ns string, sysctls map[string]string) ([]labdata.PlanStep, func(context.Context) error, error) {
	outs, undo, err := tune.StartNetNS(ctx, ns, sysctls, s.state)
	var steps []labdata.PlanStep
	for _, o := range outs {
		steps = append(steps, labdata.PlanStep{Change: o.Change, Old: o.Old, Status: string(o.Status)})
	}
	return steps, undo, err
}

// TestLabNetnsStartingSysctls: a netns target's sysctls are set inside
// its server namespace before the server listens (the runs' kernel
// evidence reads somaxconn 128 there), recorded as its start state, and
// the host's own somaxconn is untouched.
func TestLabNetnsStartingSysctls(t *testing.T) {
	testutil.NeedRoot(t)
	testutil.HostState(t) // it checks this host's own somaxconn is untouched
	hostBefore, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	if err != nil {
		t.Fatal(err)
	}
	s := tiny(t, "netns")
	s.Variants, s.Repetitions = s.Variants[:1], 1
	s.Target.Sysctls = map[string]string{"net.core.somaxconn": "128"}
	s.Workloads[0].Connect = true
	res, err := Execute(context.Background(), Options{Scenario: s, Tuner: &startTuner{state: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Target.StartState
	if len(st) != 1 || st[0].Change.Target != "net.core.somaxconn" || st[0].Change.Value != "128" || st[0].Status != "applied" {
		t.Errorf("start state %+v, want somaxconn 128 applied", st)
	}
	for _, r := range res.Runs {
		k := r.Summary.Connections.Kernel
		if k == nil || k.Server == nil || k.Server.Somaxconn == nil || *k.Server.Somaxconn != 128 || !strings.HasSuffix(k.Server.NetNS, "-srv") {
			t.Errorf("run %s: kernel evidence %+v, want somaxconn 128 read in the server's namespace", r.Workload, k)
		}
	}
	if hostAfter, _ := os.ReadFile("/proc/sys/net/core/somaxconn"); string(hostAfter) != string(hostBefore) {
		t.Errorf("the host's somaxconn went from %q to %q", hostBefore, hostAfter)
	}
}

// A starting state needs a namespace of the lab's own.
func TestStartingSysctlsNeedNetns(t *testing.T) {
	s := tiny(t, "managed")
	s.Target.Sysctls = map[string]string{"net.core.somaxconn": "128"}
	if err := Validate(&s); err == nil || !strings.Contains(err.Error(), "kind: netns") {
		t.Errorf("err = %v, want target.sysctls refused for a managed target", err)
	}
}
