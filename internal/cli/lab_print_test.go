package cli

import (
	"strings"
	"testing"
	"time"

	"redline/internal/labdata"
)

// TestVerdictTableFits80Columns: the terminal answer is one table with a
// header, every line within 80 columns, and a reason for each comparison
// that makes no claim.
func TestVerdictTableFits80Columns(t *testing.T) {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	res := &labdata.Result{Started: start, Finished: start.Add(150 * time.Second),
		Sequential: &labdata.Sequential{Rounds: 9, Stopped: labdata.StopBudget, Comparisons: 4, Alpha: 0.05},
		Comparisons: []labdata.Comparison{
			{Workload: "set-get/SET", Variant: "split-cpus-and-more", Metric: "rps", HigherIsBetter: true, Ratio: 1.254, CILow: 1.2, CIHigh: 1.31, HasCI: true, Verdict: "helps"},
			{Workload: "set-get/SET", Variant: "split-cpus-and-more", Metric: "p99_ms", Ratio: 0.91, CILow: 0.8, CIHigh: 1.05, HasCI: true, Verdict: "no clear change",
				Reason: "interval 25% wide after 9 runs, wider than the 3% precision: the runs vary too much; stopped: time budget spent (2m30s)"},
			{Workload: "values[d=100000]/SET", Variant: "tuned", Metric: "rps", HigherIsBetter: true, Ratio: 1, Verdict: "too few runs"},
			{Workload: "set-get/GET", Variant: "tuned", Metric: "p99_ms", Ratio: 9.88, CILow: 2.77, CIHigh: 43.49, HasCI: true, Verdict: "hurts"},
			{Workload: "set-get/SET", Variant: "split-cpus-and-more", Metric: "rps_spread", Ratio: 0.2, CILow: 0.05, CIHigh: 0.6, HasCI: true, Verdict: "helps"},
			{Workload: "set-get/GET", Variant: "tuned", Metric: "rps", HigherIsBetter: true, Ratio: 0.99, Verdict: "too few runs", Reason: "2 and 2 runs: a claim at this lab's error rate needs 7 a side"},
		}}
	res.Runs = []labdata.Run{{Noise: &labdata.Noise{OutsideCPU: 0.6, Noisy: "60% of the CPU went to other work"}}, {Noise: &labdata.Noise{OutsideCPU: 0.02}}}
	var b strings.Builder
	printVerdicts(&b, res)
	out := b.String()
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if len(line) > 80 {
			t.Errorf("%d columns: %q", len(line), line)
		}
	}
	for _, want := range []string{"workload", "throughput", "split-cpus-~", "~100000]/SET tuned", "×1.25 better [1.20,1.31] helps", "×0.91 better [0.80,1.05] unclear",
		"no interval too few", "×9.88 worse  [2.77,43.5] hurts", "time budget spent", "9 rounds in 2m30s", "the machine was busy: 1 of 2 runs flagged as noisy", "split-cpus-and-more on set-get/SET is steadier: run-to-run spread ×0.20", "×0.99 worse  no interval too few"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestVerdictTableSaysWhyNothingIsClear: with no claim and wide
// intervals, the table is followed by the lab's one-sentence answer.
func TestVerdictTableSaysWhyNothingIsClear(t *testing.T) {
	res := &labdata.Result{Host: labdata.HostFacts{CPUs: 2}, Sequential: &labdata.Sequential{Precision: 0.03, Looks: []int{11, 16}},
		Comparisons: []labdata.Comparison{{Workload: "set-get/SET", Variant: "tuned", Metric: "rps", HigherIsBetter: true, Ratio: 1.02, CILow: 0.93, CIHigh: 1.1, HasCI: true, Verdict: "no clear change"}}}
	var b strings.Builder
	printVerdicts(&b, res)
	if out := b.String(); !strings.Contains(out, "- Nothing is clear: the intervals are 17% wide") || strings.Contains(out, "[11 16]") {
		t.Errorf("table:\n%s", out)
	}
}
