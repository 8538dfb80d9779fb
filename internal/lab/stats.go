package lab

import (
	"slices"

	"redline/internal/stats"
)

func median(v []float64) float64 { return stats.Median(v) }

func minMax(v []float64) (float64, float64) {
	if len(v) == 0 {
		return 0, 0
	}
	return slices.Min(v), slices.Max(v)
}

// compare builds a Comparison of a variant's values against the baseline's.
// A verdict other than "no clear change" needs the whole interval on one
// side of 1; with fewer than 3 runs on either side there is no verdict.
func compare(workload, variant, baseline, metric string, higherBetter bool, vals, base []float64) Comparison {
	c := Comparison{Workload: workload, Variant: variant, Baseline: baseline, Metric: metric, HigherIsBetter: higherBetter,
		N: len(vals), BaselineN: len(base), Median: median(vals), BaselineMedian: median(base), Verdict: VerdictNoClear}
	c.Min, c.Max = minMax(vals)
	if c.BaselineMedian > 0 {
		c.Ratio = c.Median / c.BaselineMedian
	}
	c.CILow, c.CIHigh = stats.RatioCI(vals, base)
	if len(vals) < 3 || len(base) < 3 {
		return c
	}
	better, worse := c.CILow > 1, c.CIHigh < 1
	if !higherBetter {
		better, worse = worse, better
	}
	switch {
	case better:
		c.Verdict = VerdictHelps
	case worse:
		c.Verdict = VerdictHurts
	}
	return c
}
