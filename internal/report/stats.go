package report

import (
	"slices"

	"redline/internal/stats"
)

// Spread is the median and range of one metric over a group's runs.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Pct is (max-min)/median in percent: how far apart the runs were.
func (s Spread) Pct() float64 {
	if s.Median == 0 {
		return 0
	}
	return 100 * (s.Max - s.Min) / s.Median
}

func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	return Spread{Median: median(xs), Min: slices.Min(xs), Max: slices.Max(xs)}
}

func median(xs []float64) float64 { return stats.Median(xs) }

// verdictWords are the words a computed comparison uses: the lab's for
// variants of one experiment, neutral ones for merged results.
type verdictWords struct{ better, worse, unclear string }

var (
	labWords   = verdictWords{"helps", "hurts", "no clear change"}
	mergeWords = verdictWords{"better", "worse", "no clear difference"}
)

// VerdictTooFew is the verdict when a group has fewer than MinRuns usable
// runs: no claim is made.
const VerdictTooFew = "too few runs"

// MinRuns is the fewest runs per group a computed verdict needs. With two
// runs a side the bootstrap calls identical setups different a third of
// the time; with three about one time in eight, with five one in thirty
// (measured in TestBootstrapFalsePositives). Reports add a caution for
// groups below TrustedRuns.
const (
	MinRuns     = 3
	TrustedRuns = 5
)

// compare computes the ratio of medians of x against ref with its
// bootstrap interval and a verdict that claims a difference only when the
// interval excludes 1.
func compare(x, ref []float64, higherIsBetter bool, words verdictWords) *Versus {
	if len(x) == 0 || len(ref) == 0 || median(ref) == 0 {
		return nil
	}
	v := &Versus{N: len(x), RefN: len(ref), Ratio: median(x) / median(ref), ComputedBy: "report"}
	if len(x) < MinRuns || len(ref) < MinRuns {
		v.Verdict = VerdictTooFew
		return v
	}
	v.CILow, v.CIHigh = stats.RatioCI(x, ref)
	v.HasCI = true
	v.Verdict = words.unclear
	switch {
	case v.CILow > 1:
		v.Verdict = pick(higherIsBetter, words.better, words.worse)
	case v.CIHigh < 1:
		v.Verdict = pick(higherIsBetter, words.worse, words.better)
	}
	return v
}

func pick(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}
