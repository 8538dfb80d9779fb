package lab

import (
	"context"
	"strings"
	"testing"
	"time"

	"redline/internal/bench"
	"redline/internal/benchdata"
	"redline/internal/labdata"
)

// fixedRuns makes every run measure rps (a variant's by its label), so the
// lab's stopping rule can be watched without the machine's noise.
func fixedRuns(t *testing.T, rps func(n int) float64) {
	real := runBench
	n := 0
	runBench = func(ctx context.Context, o bench.Options, tt bench.Test, data []byte) (*benchdata.Summary, error) {
		n++
		return &benchdata.Summary{Title: tt.Title, RPS: rps(n), Requests: 1000, Latency: benchdata.Latency{P99: 1}}, nil
	}
	// The fake's values follow the run's index, so the variants' order
	// (drawn from the seed) decides what each variant measured: a drawn
	// seed made "no clear change" a matter of luck (seen once in CI).
	seed := newSeed
	newSeed = func() uint64 { return 1 }
	t.Cleanup(func() { runBench, newSeed = real, seed })
}

func adaptive(t *testing.T, extra string) labdata.Scenario {
	t.Helper()
	s, err := ParseScenario([]byte(`
name: adaptive
target: {kind: managed}
workloads:
  - name: set
    bench: -t set -c 2 -n 100
variants:
  - name: baseline
  - name: hz50
    server: {config: ["hz 50"]}
min_runs: 6
max_runs: 20
doctor: false
` + extra))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLabStopsWhenPrecise: runs that never vary give intervals of width
// 0, so the lab stops at its first look: min_runs 6 is too few for a
// paired claim at this design, so the first look is at the 9 rounds that
// can make one.
func TestLabStopsWhenPrecise(t *testing.T) {
	fixedRuns(t, func(int) float64 { return 1000 })
	res, err := Execute(context.Background(), Options{Scenario: adaptive(t, "")})
	if err != nil {
		t.Fatal(err)
	}
	q := res.Sequential
	if !q.Paired || q.RunsNeeded != 9 || q.Looks[0] != 9 || q.Rounds != 9 || q.Stopped != labdata.StopPrecise || len(q.LooksTaken) != 1 || q.LooksTaken[0] != 9 {
		t.Errorf("design after the lab %+v", q)
	}
	if p := res.Planned; p.Total != 2*20 || p.MinTotal != 2*9 { // from the first look
		t.Errorf("planned %+v", p)
	}
}

// TestLabStopsAtTheMaximum: runs that keep varying run to max_runs, and
// the comparisons say so.
func TestLabStopsAtTheMaximum(t *testing.T) {
	fixedRuns(t, func(n int) float64 { return 1000 + float64(n%7)*100 })
	res, err := Execute(context.Background(), Options{Scenario: adaptive(t, "")})
	if err != nil {
		t.Fatal(err)
	}
	q := res.Sequential
	if q.Rounds != 20 || q.Stopped != labdata.StopMaxRuns || len(q.LooksTaken) != len(q.Looks) {
		t.Errorf("design after the lab %+v", q)
	}
	for _, c := range res.Comparisons {
		if c.Metric == "rps" && (c.Verdict != "no clear change" || !strings.Contains(c.Reason, "maximum runs reached")) {
			t.Errorf("%s %s: reason %q", c.Workload, c.Metric, c.Reason)
		}
	}
}

// TestLabKeepsItsBudget: a budget no round fits in stops the lab after
// its first round, with "too few runs" and the reason.
func TestLabKeepsItsBudget(t *testing.T) {
	fixedRuns(t, func(int) float64 { return 1000 })
	s := adaptive(t, "")
	s.Budget = time.Nanosecond
	res, err := Execute(context.Background(), Options{Scenario: s})
	if err != nil {
		t.Fatal(err)
	}
	if q := res.Sequential; q.Rounds != 1 || q.Stopped != labdata.StopBudget {
		t.Errorf("design after the lab %+v", q)
	}
	for _, c := range res.Comparisons {
		if c.Verdict != "too few runs" || !strings.Contains(c.Reason, "time budget spent") {
			t.Errorf("%s %s: %s, reason %q", c.Workload, c.Metric, c.Verdict, c.Reason)
		}
	}
}

// TestRetryNoisy: a run flagged as noisy is run again; it stays in the
// file, marked, and out of the statistics.
func TestRetryNoisy(t *testing.T) {
	fixedRuns(t, func(int) float64 { return 1000 })
	real := startProbe
	probes := 0
	startProbe = func(string, int) func() *labdata.Noise {
		probes++
		noisy := probes == 1
		return func() *labdata.Noise {
			if noisy {
				return &labdata.Noise{OutsideCPU: 0.5, Noisy: "50% of the CPU went to other work"}
			}
			return &labdata.Noise{}
		}
	}
	t.Cleanup(func() { startProbe = real })
	s := adaptive(t, "retry_noisy: true\n")
	s.MinRuns, s.MaxRuns = 3, 3
	res, err := Execute(context.Background(), Options{Scenario: s})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2*3+1 || !res.Runs[0].Retried || res.Runs[1].Retried || res.Runs[1].Variant != res.Runs[0].Variant {
		t.Fatalf("%d runs, first retried %v", len(res.Runs), res.Runs[0].Retried)
	}
	for _, c := range res.Comparisons {
		if c.Metric == "rps" && (c.N != 3 || c.BaselineN != 3) {
			t.Errorf("%+v: the retried run counted", c)
		}
	}
}
