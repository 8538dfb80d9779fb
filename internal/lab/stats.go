package lab

import (
	"math/rand/v2"
	"sort"
)

// BootstrapResamples is how many resamples the confidence interval uses.
const BootstrapResamples = 4000

// median returns the median of v (0 for none).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func minMax(v []float64) (float64, float64) {
	if len(v) == 0 {
		return 0, 0
	}
	lo, hi := v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// ratioCI returns a 95% percentile-bootstrap interval for
// median(a)/median(b), resampling each group with replacement. The seed is
// fixed so a report is reproducible from its runs.
func ratioCI(a, b []float64) (lo, hi float64) {
	if len(a) == 0 || len(b) == 0 {
		return 0, 0
	}
	r := rand.New(rand.NewPCG(20260101, uint64(len(a))<<32|uint64(len(b))))
	ratios := make([]float64, 0, BootstrapResamples)
	ra, rb := make([]float64, len(a)), make([]float64, len(b))
	for range BootstrapResamples {
		for i := range ra {
			ra[i] = a[r.IntN(len(a))]
		}
		for i := range rb {
			rb[i] = b[r.IntN(len(b))]
		}
		if mb := median(rb); mb > 0 {
			ratios = append(ratios, median(ra)/mb)
		}
	}
	sort.Float64s(ratios)
	if len(ratios) == 0 {
		return 0, 0
	}
	at := func(q float64) float64 { return ratios[min(len(ratios)-1, int(q*float64(len(ratios))))] }
	return at(0.025), at(0.975)
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
	c.CILow, c.CIHigh = ratioCI(vals, base)
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
