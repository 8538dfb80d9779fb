package labdata

import (
	"testing"

	"redline/internal/stats"
)

// TestUpgradeV1 judges a v1 file's verdicts again with the minimum-runs
// rule: two runs a side were written as "no clear change" with an
// interval; they read as too few runs, with none.
func TestUpgradeV1(t *testing.T) {
	r := &Result{Schema: ResultSchemaV1, Comparisons: []Comparison{
		{Metric: "rps", HigherIsBetter: true, N: 2, BaselineN: 2, Ratio: 1.298, CILow: 1.287, CIHigh: 1.310, Verdict: "no clear change"},
		{Metric: "rps", HigherIsBetter: true, N: 3, BaselineN: 3, Ratio: 1.2, CILow: 1.1, CIHigh: 1.3, Verdict: "helps"},
		{Metric: "p99_ms", HigherIsBetter: false, N: 5, BaselineN: 5, Ratio: 1.2, CILow: 0.9, CIHigh: 1.3, Verdict: "hurts"},
	}}
	Upgrade(r)
	want := []struct {
		verdict string
		hasCI   bool
	}{{stats.VerdictTooFew, false}, {"helps", true}, {"no clear change", true}}
	for i, c := range r.Comparisons {
		if c.Verdict != want[i].verdict || c.HasCI != want[i].hasCI || (!c.HasCI && (c.CILow != 0 || c.CIHigh != 0)) {
			t.Errorf("comparison %d: %q HasCI %v [%v, %v], want %q HasCI %v", i, c.Verdict, c.HasCI, c.CILow, c.CIHigh, want[i].verdict, want[i].hasCI)
		}
	}
	if r.Schema != ResultSchemaV1 {
		t.Errorf("schema %q: Upgrade must keep what the file was", r.Schema)
	}
}
