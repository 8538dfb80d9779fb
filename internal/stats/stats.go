// Package stats holds the statistics the lab and the reports share: the
// median, an exact rank (Mann-Whitney, Hodges-Lehmann) interval for a
// ratio, the lab's error budget over comparisons and sequential looks
// (Design, LookSchedule), and the one verdict function (Compare).
package stats

import "slices"

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
