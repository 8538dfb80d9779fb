package labdata

import (
	"strings"
	"testing"

	"redline/internal/benchdata"
)

// TestNothingClearSaysCauseAndNextStep is the default lab on a 2-CPU VM:
// 1-second runs, every interval 10-20% wide against 3%, no run flagged as
// noisy. The answer names the cause, tells the noise flag apart from the
// runs' own variation, and advises only what redline lab accepts.
func TestNothingClearSaysCauseAndNextStep(t *testing.T) {
	r := &Result{Host: HostFacts{CPUs: 2}, Sequential: &Sequential{Precision: 0.03, Looks: []int{11, 16}}}
	for _, w := range []float64{0.10, 0.20} {
		r.Comparisons = append(r.Comparisons,
			Comparison{Metric: "rps", HigherIsBetter: true, Ratio: 1.01, CILow: 1 - w/2, CIHigh: 1 + w/2, HasCI: true, Paired: true, Verdict: "no clear change"},
			Comparison{Metric: "p99_ms", Ratio: 0.98, CILow: 1 - w/2, CIHigh: 1 + w/2, HasCI: true, Paired: true, Verdict: "no clear change"})
	}
	for range 30 {
		r.Runs = append(r.Runs, Run{Summary: &benchdata.Summary{ElapsedSeconds: 1.0}, Noise: &Noise{}})
	}
	got := r.NothingClear()
	for _, want := range []string{"10-20% wide against the 3% precision", "within a round", "1-second runs", "client and server sharing 2 CPUs",
		"0 of 30 runs were flagged as noisy, a flag for other work taking the machine, which is not this variation", "redline lab --budget 10m", "--duration 10s: redline lab FILE"} {
		if !strings.Contains(got, want) {
			t.Errorf("answer lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "[") || strings.Count(got, ". ") > 0 {
		t.Errorf("want one sentence without Go slices:\n%s", got)
	}
	if got := r.Sequential.LooksText(); got != "11 and 16" {
		t.Errorf("looks %q, want \"11 and 16\"", got)
	}
	r.Comparisons[0].Verdict = "helps"
	if got := r.NothingClear(); got != "" {
		t.Errorf("a claim was made, yet: %q", got)
	}
}
