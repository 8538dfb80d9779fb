package stats

import "testing"

// TestRatioWords: one convention for every metric: the ratio is this ÷
// reference, and the word says whether that is better or worse.
func TestRatioWords(t *testing.T) {
	for _, c := range []struct {
		r    float64
		hib  bool
		want string
	}{
		{1.095, false, "×1.095 (9.5% worse)"}, // p99 up
		{0.91, false, "×0.910 (9.0% better)"}, // p99 down
		{1.152, true, "×1.152 (15.2% better)"},
		{0.8, true, "×0.800 (20.0% worse)"},
		{1.0002, true, "×1.000 (no change)"},
	} {
		if got := FormatRatio(c.r, c.hib); got != c.want {
			t.Errorf("FormatRatio(%v, %v) = %q, want %q", c.r, c.hib, got, c.want)
		}
	}
}
