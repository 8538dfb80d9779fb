package stats

import (
	"math"
	"slices"
	"sync"
)

// The interval of a ratio is the Hodges-Lehmann interval of the shift of
// log values: the log ratios of every pair (one run of each side), sorted,
// cut at the ranks the exact Mann-Whitney distribution gives. It assumes
// nothing about the shape of the runs' distribution: under "the two sides
// are the same" every ordering of the pooled runs is equally likely, so the
// chance that the interval excludes 1 is at most the level, bimodal runs
// or not. Ties (quantised latencies) only make it more cautious: a zero
// log ratio never lies strictly on one side.

// pairLogRatios returns the sorted log(x_i/ref_j) of every pair.
func pairLogRatios(x, ref []float64) []float64 {
	lr := make([]float64, len(ref))
	for j, b := range ref {
		lr[j] = math.Log(b)
	}
	d := make([]float64, 0, len(x)*len(ref))
	for _, a := range x {
		la := math.Log(a)
		for _, b := range lr {
			d = append(d, la-b)
		}
	}
	slices.Sort(d)
	return d
}

// rankCut returns the number k of the smallest (and largest) pair ratios
// an interval at the two-sided level leaves out below (above) it: the
// largest k with P(U <= k-1) <= level/2 under the exact null distribution
// of the Mann-Whitney U for sizes n and m. 0 means that no interval at
// this level is possible with so few runs.
func rankCut(n, m int, level float64) int {
	key := cutKey{n, m, level}
	if k, ok := cutCache.Load(key); ok {
		return k.(int)
	}
	cdf := uCDF(n, m)
	k := 0
	for k < len(cdf) && cdf[k] <= level/2 {
		k++
	}
	if 2*k > n*m { // never cut past the middle
		k = n * m / 2
	}
	cutCache.Store(key, k)
	return k
}

type cutKey struct {
	n, m  int
	level float64
}

var cutCache sync.Map

// uCDF returns P(U <= u) for u = 0..n*m, U the Mann-Whitney count of pairs
// with the first side larger, under the null hypothesis. Counts come from
// the recurrence f(i,j,u) = f(i-1,j,u-j) + f(i,j-1,u) in float64 (exact
// up to 2^53; beyond that the relative error is 1e-16, far below any
// level used here).
func uCDF(n, m int) []float64 {
	size := n*m + 1
	// prev[j][u] = f(i-1, j, u); cur[j][u] = f(i, j, u).
	prev := make([][]float64, m+1)
	for j := range prev {
		prev[j] = make([]float64, size)
		prev[j][0] = 1 // f(0, j, 0) = 1
	}
	for i := 1; i <= n; i++ {
		cur := make([][]float64, m+1)
		cur[0] = make([]float64, size)
		cur[0][0] = 1 // f(i, 0, 0) = 1
		for j := 1; j <= m; j++ {
			c := make([]float64, size)
			for u := range size {
				c[u] = cur[j-1][u]
				if u >= j {
					c[u] += prev[j][u-j]
				}
			}
			cur[j] = c
		}
		prev = cur
	}
	f := prev[m]
	total := 0.0
	for _, v := range f {
		total += v
	}
	cdf := make([]float64, size)
	acc := 0.0
	for u, v := range f {
		acc += v
		cdf[u] = acc / total
	}
	return cdf
}

// The paired interval. A lab runs every variant once a round, so a round's
// runs share what the machine was doing then (other work, the scheduler's
// mood, the CPU's clock). The log ratio of a variant's run to the
// baseline's run of the same round cancels that, and the Hodges-Lehmann
// interval of those paired log ratios is cut at the ranks of the exact
// Wilcoxon signed-rank distribution: under "the two setups are the same",
// with the order of the runs within a round drawn at random, each paired
// log ratio is as likely to be negative as positive, whatever the
// machine's noise and however it drifts between rounds.

// walshAverages returns the sorted averages (d_i + d_j)/2, i <= j.
func walshAverages(d []float64) []float64 {
	w := make([]float64, 0, len(d)*(len(d)+1)/2)
	for i := range d {
		for j := i; j < len(d); j++ {
			w = append(w, (d[i]+d[j])/2)
		}
	}
	slices.Sort(w)
	return w
}

// signedRankCut is rankCut for n pairs: the number of the smallest (and
// largest) Walsh averages an interval at the two-sided level leaves out,
// the largest k with P(W <= k-1) <= level/2 for the signed-rank W.
func signedRankCut(n int, level float64) int {
	key := cutKey{n, -1, level}
	if k, ok := cutCache.Load(key); ok {
		return k.(int)
	}
	cdf := wCDF(n)
	k := 0
	for k < len(cdf) && cdf[k] <= level/2 {
		k++
	}
	if m := n * (n + 1) / 2; 2*k > m {
		k = m / 2
	}
	cutCache.Store(key, k)
	return k
}

// wCDF returns P(W <= w) for w = 0..n(n+1)/2, W the sum of the ranks of
// the positive differences among n, under the null hypothesis: every
// subset of ranks equally likely. Counts come from the subset-sum
// recurrence, in float64 (exact up to 2^53).
func wCDF(n int) []float64 {
	size := n*(n+1)/2 + 1
	f := make([]float64, size)
	f[0] = 1
	for r := 1; r <= n; r++ {
		for w := size - 1; w >= r; w-- {
			f[w] += f[w-r]
		}
	}
	total := math.Ldexp(1, n)
	cdf := make([]float64, size)
	acc := 0.0
	for w, v := range f {
		acc += v
		cdf[w] = acc / total
	}
	return cdf
}
