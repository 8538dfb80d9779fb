// Package stats holds the statistics the lab and the reports share: the
// median, a percentile-bootstrap interval for a ratio of medians, and the
// one verdict function (Compare) with its minimum-runs rule.
package stats

import (
	"math/rand/v2"
	"slices"
)

// Bootstrap settings: resamples per interval and a fixed seed, so the same
// runs always give the same interval (a report is reproducible).
const (
	Resamples = 4000
	seed      = 0x7265646c696e65 // "redline"
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

// RatioCI bounds Median(x)/Median(ref) with 95% confidence by resampling
// both groups with replacement (percentile bootstrap). It returns zeros
// when either group is empty.
func RatioCI(x, ref []float64) (lo, hi float64) {
	if len(x) == 0 || len(ref) == 0 {
		return 0, 0
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(x))<<32|uint64(len(ref))))
	ratios := make([]float64, 0, Resamples)
	bx, br := make([]float64, len(x)), make([]float64, len(ref))
	for range Resamples {
		resample(rng, x, bx)
		resample(rng, ref, br)
		if m := Median(br); m != 0 {
			ratios = append(ratios, Median(bx)/m)
		}
	}
	if len(ratios) == 0 {
		return 0, 0
	}
	slices.Sort(ratios)
	return quantileSorted(ratios, 0.025), quantileSorted(ratios, 0.975)
}

func resample(rng *rand.Rand, from, to []float64) {
	for i := range to {
		to[i] = from[rng.IntN(len(from))]
	}
}

// quantileSorted interpolates linearly between the closest ranks.
func quantileSorted(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	f := pos - float64(i)
	return s[i]*(1-f) + s[i+1]*f
}
