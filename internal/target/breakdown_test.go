package target

import (
	"context"
	"testing"

	"redline/internal/autotune"
	"redline/internal/testutil"
)

// TestAutotuneTrialBreaksDownServerTime: a trial asked for a breakdown
// returns where the managed server's time went during its run (the
// lab's per-run breakdown, through the host's Sample) and its time by
// command (INFO commandstats, after less before).
func TestAutotuneTrialBreaksDownServerTime(t *testing.T) {
	testutil.Heavy(t)
	tg, _ := startTrialTarget(t, nil, false)
	m, err := tg.Trial(context.Background(), autotune.Config{{Knob: "redis.hz", Value: "50"}}, autotune.TrialOptions{Breakdown: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Value <= 0 || m.P99 <= 0 || m.Breakdown == nil || m.Breakdown.Server == nil || m.Breakdown.Server.PID != tg.base().pid || len(m.Breakdown.CPUs) == 0 {
		t.Fatalf("measurement %+v; want a rate, a p99 and the server's breakdown", m)
	}
	if len(m.Commands) == 0 || m.Commands[0].Command != "set" || m.Commands[0].Calls <= 0 || m.Commands[0].Usec <= 0 {
		t.Errorf("commands %+v; want the run's SETs first", m.Commands)
	}
	for _, c := range m.Commands {
		if c.Command == "info" || c.Command == "flushall" {
			t.Errorf("command %s counted: the sampling's own, or before the run", c.Command)
		}
	}
	if m, _ := tg.Trial(context.Background(), autotune.Config{}, autotune.TrialOptions{}); m.Breakdown != nil {
		t.Error("a trial not asked for a breakdown took one")
	}
}
