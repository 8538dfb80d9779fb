package stats

import "math"

// MinRuns is the fewest runs per side the verdict of a v1 lab needed
// (Judge); the current verdict needs what its Design needs
// (Design.RunsNeeded).
const MinRuns = 3

// Outcome is what a comparison concludes.
type Outcome int

// The outcomes. Better and Worse are claims; Unclear means the interval
// includes 1; TooFew means no claim is made and no interval is given.
const (
	Unclear Outcome = iota
	Better
	Worse
	TooFew
)

// Words are the verdicts an output prints for each Outcome: the lab's for
// variants of one experiment, neutral ones for merged results. Too few
// runs read the same everywhere.
type Words struct{ Better, Worse, Unclear string }

// The two vocabularies, and the verdict for too few runs.
var (
	LabWords   = Words{"helps", "hurts", "no clear change"}
	MergeWords = Words{"better", "worse", "no clear difference"}
)

// VerdictTooFew is the verdict when the runs are too few for an interval
// at the design's level.
const VerdictTooFew = "too few runs"

// Verdict is the word for o.
func (w Words) Verdict(o Outcome) string {
	switch o {
	case Better:
		return w.Better
	case Worse:
		return w.Worse
	case TooFew:
		return VerdictTooFew
	}
	return w.Unclear
}

// Claims reports whether verdict, in any vocabulary, claims a difference.
func Claims(verdict string) bool {
	switch verdict {
	case LabWords.Better, LabWords.Worse, MergeWords.Better, MergeWords.Worse:
		return true
	}
	return false
}

// Comparison is x against a reference group: the medians, the ratio of x
// to the reference (the Hodges-Lehmann estimate: the median of the ratios
// of every pair of runs), its interval at Level (when HasCI) and the
// outcome.
type Comparison struct {
	N, RefN           int
	Median, RefMedian float64
	Ratio             float64
	CILow, CIHigh     float64
	HasCI             bool
	Level             float64
	Outcome           Outcome
	// Paired says that x[i] and ref[i] were runs of one round and the
	// interval is of their paired ratios (ComparePaired).
	Paired bool
}

// Compare is THE verdict: the lab, the report and the CLI all take theirs
// from it (the report and the CLI by reading what the lab recorded). It
// returns false when there is no ratio to form (a group is empty or holds
// a value that is not positive). The interval is the exact,
// distribution-free Mann-Whitney (Hodges-Lehmann) interval of the ratio at
// d.Level(); a difference is claimed only when it excludes 1. When the
// runs are too few for any interval at that level the outcome is TooFew
// and no interval is given (d.RunsNeeded says how many it takes).
func Compare(x, ref []float64, higherIsBetter bool, d Design) (Comparison, bool) {
	c := Comparison{N: len(x), RefN: len(ref), Median: Median(x), RefMedian: Median(ref), Level: d.Level()}
	if len(x) == 0 || len(ref) == 0 || !positive(x) || !positive(ref) {
		return c, false
	}
	pairs := pairLogRatios(x, ref)
	c.Ratio = math.Exp(Median(pairs))
	k := rankCut(c.N, c.RefN, c.Level)
	if k == 0 {
		c.Outcome = TooFew
		return c, true
	}
	c.CILow, c.CIHigh, c.HasCI = math.Exp(pairs[k-1]), math.Exp(pairs[len(pairs)-k]), true
	c.Outcome = outcome(c.CILow, c.CIHigh, higherIsBetter)
	return c, true
}

// ComparePaired is Compare for runs taken in rounds: x[i] and ref[i] ran
// in the same round, in an order drawn at random. The ratio is the
// Hodges-Lehmann estimate of the paired ratios (the median of the Walsh
// averages of their logs) and the interval is the exact Wilcoxon
// signed-rank interval at d.Level(): what the machine did to a whole round
// cancels out, so the interval is as wide as the noise within a round, not
// between rounds. It needs more pairs than Compare needs runs a side before
// it can make any claim (d.RunsNeeded with d.Paired says how many); with
// fewer the outcome is TooFew. It panics if the lengths differ.
func ComparePaired(x, ref []float64, higherIsBetter bool, d Design) (Comparison, bool) {
	if len(x) != len(ref) {
		panic("stats.ComparePaired: groups of different sizes")
	}
	c := Comparison{N: len(x), RefN: len(ref), Median: Median(x), RefMedian: Median(ref), Level: d.Level(), Paired: true}
	if len(x) == 0 || !positive(x) || !positive(ref) {
		return c, false
	}
	diffs := make([]float64, len(x))
	for i := range x {
		diffs[i] = math.Log(x[i]) - math.Log(ref[i])
	}
	w := walshAverages(diffs)
	c.Ratio = math.Exp(Median(w))
	k := signedRankCut(len(x), c.Level)
	if k == 0 {
		c.Outcome = TooFew
		return c, true
	}
	c.CILow, c.CIHigh, c.HasCI = math.Exp(w[k-1]), math.Exp(w[len(w)-k]), true
	c.Outcome = outcome(c.CILow, c.CIHigh, higherIsBetter)
	return c, true
}

func positive(xs []float64) bool {
	for _, v := range xs {
		if !(v > 0) {
			return false
		}
	}
	return true
}

func outcome(lo, hi float64, higherIsBetter bool) Outcome {
	switch {
	case lo > 1 && higherIsBetter, hi < 1 && !higherIsBetter:
		return Better
	case lo > 1, hi < 1:
		return Worse
	}
	return Unclear
}

// Judge decides the outcome of a comparison recorded by an older lab
// (redline.lab/v1) from its run counts and interval, with the minimum-runs
// rule of that time (MinRuns a side).
func Judge(n, refN int, lo, hi float64, higherIsBetter bool) Outcome {
	if n < MinRuns || refN < MinRuns {
		return TooFew
	}
	return outcome(lo, hi, higherIsBetter)
}
