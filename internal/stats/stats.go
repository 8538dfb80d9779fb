// Package stats holds the statistics the lab and the reports share: the
// median, an exact rank (Mann-Whitney, Hodges-Lehmann) interval for a
// ratio, the lab's error budget over comparisons and sequential looks
// (Design, LookSchedule), and the one verdict function (Compare).
package stats

import (
	"math"
	"slices"
)

// Median returns the median of xs (the mean of the middle two for an even
// count), 0 for none, without reordering xs.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// PairSpreads measures the runs' spread as a group of its own that
// Compare can set against another group's: the relative difference
// |a-b|/((a+b)/2) of each successive pair of runs (the first and second,
// the third and fourth, ...; an odd last run is left out). Runs of one
// setup are taken as independent draws, so these are too, and two setups
// that are the same give them the same distribution: the rank interval
// stays exact. (Deviations from a group's own mean or median would not:
// they depend on each other through it, and on bimodal runs a rank test
// of them calls identical setups different a quarter of the time.) A
// difference of exactly 0 is raised to a millionth so ratios stay finite.
func PairSpreads(xs []float64) []float64 {
	var out []float64
	for i := 1; i < len(xs); i += 2 {
		a, b := xs[i-1], xs[i]
		d := a - b
		if d < 0 {
			d = -d
		}
		if m := (a + b) / 2; m != 0 {
			d /= m
		}
		out = append(out, max(d, 1e-6))
	}
	return out
}

// MedianCI bounds the median of the distribution xs were drawn from with
// confidence at least 1-level, from order statistics (the binomial
// interval: no assumption on the shape). ok is false when there are too
// few values for that confidence.
func MedianCI(xs []float64, level float64) (lo, hi float64, ok bool) {
	n := len(xs)
	s := slices.Clone(xs)
	slices.Sort(s)
	// k is the largest count with P(Binomial(n, 1/2) < k) <= level/2.
	k, cdf, p := 0, 0.0, math.Pow(0.5, float64(n))
	for k < n/2 {
		if cdf+p > level/2 {
			break
		}
		cdf += p
		k++
		p *= float64(n-k+1) / float64(k)
	}
	if k == 0 {
		return 0, 0, false
	}
	return s[k-1], s[n-k], true
}
