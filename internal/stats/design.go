package stats

import "math"

// Design is the error budget of one lab: Alpha is the chance, per lab,
// that any of its comparisons claims a difference between setups that are
// in fact the same. It is spread evenly (Bonferroni) over the lab's
// Comparisons (tests x metrics x variants) and over its Looks (the times
// the lab examines the runs to decide whether to go on), so it holds
// whatever the stopping rule and however the comparisons depend on each
// other.
type Design struct {
	Alpha       float64 `json:"alpha"`
	Comparisons int     `json:"comparisons"`
	Looks       int     `json:"looks"`
	// Paired designs compare runs round by round (ComparePaired).
	Paired bool `json:"paired,omitempty"`
}

// MetricsPerComparison is how many comparisons a lab makes per variant and
// test: throughput, p99 latency, and the spread of the throughput.
const MetricsPerComparison = 3

// DefaultAlpha is the per-lab false-positive rate unless a scenario says
// otherwise.
const DefaultAlpha = 0.05

// Level is the two-sided level each comparison uses at each look.
func (d Design) Level() float64 {
	a := d.Alpha
	if a <= 0 {
		a = DefaultAlpha
	}
	return a / float64(max(d.Comparisons, 1)*max(d.Looks, 1))
}

// Confidence is 1 - Level: the confidence of every interval the design
// gives.
func (d Design) Confidence() float64 { return 1 - d.Level() }

// RunsNeeded is the fewest runs a side with which a comparison at this
// design can make a claim at all (with fewer, even runs that do not overlap
// could be chance).
func (d Design) RunsNeeded() int {
	for n := 1; n < 1000; n++ {
		if d.Paired && signedRankCut(n, d.Level()) > 0 || !d.Paired && rankCut(n, n, d.Level()) > 0 {
			return n
		}
	}
	return 1000
}

// LookSchedule is the run counts (per side) at which a sequential lab
// examines its runs: minRuns, then about 1.5 times the previous count,
// and maxRuns. Fixing the looks in advance is what lets Design split its
// error budget between them.
func LookSchedule(minRuns, maxRuns int) []int {
	if maxRuns < minRuns {
		maxRuns = minRuns
	}
	looks := []int{minRuns}
	for n := minRuns; n < maxRuns; {
		n = max(n+1, int(math.Ceil(float64(n)*1.5)))
		if n >= maxRuns || float64(maxRuns) < float64(n)*1.2 {
			break
		}
		looks = append(looks, n)
	}
	if looks[len(looks)-1] != maxRuns {
		looks = append(looks, maxRuns)
	}
	return looks
}
