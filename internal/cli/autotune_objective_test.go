package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/autotune"
	"redline/internal/testutil"
)

// TestAutotuneObjectivesEndToEnd: short real sessions on a managed
// redis-server with one neutral knob, one per objective: p99 at a fixed
// offered rate (--rate in the workload), and throughput bounded by a p99
// (--p99-max). Each runs to its end, states its objective in the output
// and the report, and writes report.md and report.html.
func TestAutotuneObjectivesEndToEnd(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	testutil.Heavy(t)
	for _, c := range []struct {
		name  string
		args  []string
		state string
	}{
		{"p99 at a rate", []string{"--objective", "p99", "--workload", "-t set -c 4 --rate 2000 --duration 200ms --warmup 50ms"}, "objective: p99 latency"},
		{"throughput bounded", []string{"--p99-max", "1s", "--workload", "-t set -c 4 -P 4 --duration 200ms --warmup 50ms"}, "throughput subject to p99 ≤ 1s"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "at")
			args := append([]string{"autotune", "--dir", dir, "--seed", "3", "--knob", "redis.slowlog-max-len", "--max-rounds", "12"}, c.args...)
			stdout, stderr, code := runCLI(t, context.Background(), nil, args...)
			if code != ExitOK && code != ExitFailure || strings.Contains(stderr, "trial of") {
				t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
			}
			want := strings.TrimPrefix(c.state, "objective: ")
			if !strings.Contains(stdout, "autotune: "+want) {
				t.Errorf("the output does not state the objective %q:\n%s", want, stdout)
			}
			res := readAutotuneResult(t, dir)
			if res.Noise.Rounds == 0 || len(res.Trials) != 1 {
				t.Errorf("noise %d rounds, %d comparisons; want the noise and one comparison", res.Noise.Rounds, len(res.Trials))
			}
			for _, f := range []string{"report.md", "report.html"} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil || !strings.Contains(string(b), want) || !strings.Contains(string(b), "redis.slowlog-max-len = 1024") {
					t.Errorf("%s does not state the objective or the comparison (%v)", f, err)
				}
			}
		})
	}
}

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
