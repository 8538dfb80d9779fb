package stats

// MinRuns is the fewest runs per side a verdict needs. With two runs a
// side the bootstrap calls identical setups different a third of the
// time; with three about one time in eight, with five one in thirty
// (measured in TestBootstrapFalsePositives). Reports add a caution for
// groups below TrustedRuns.
const (
	MinRuns     = 3
	TrustedRuns = 5
)

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

// VerdictTooFew is the verdict when either side has fewer than MinRuns
// runs.
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

// Comparison is x against a reference group: the ratio of their medians,
// its 95% bootstrap interval (when HasCI) and the outcome.
type Comparison struct {
	N, RefN           int
	Median, RefMedian float64
	Ratio             float64
	CILow, CIHigh     float64
	HasCI             bool
	Outcome           Outcome
}

// Compare is THE verdict: the lab, the report and the CLI all take theirs
// from it (the report and the CLI by reading what the lab recorded). It
// returns false when there is no ratio to form (a group is empty or the
// reference median is 0). With fewer than MinRuns on either side the
// outcome is TooFew and no interval is computed; otherwise a difference is
// claimed only when the interval excludes 1.
func Compare(x, ref []float64, higherIsBetter bool) (Comparison, bool) {
	c := Comparison{N: len(x), RefN: len(ref), Median: Median(x), RefMedian: Median(ref)}
	if len(x) == 0 || len(ref) == 0 || c.RefMedian == 0 {
		return c, false
	}
	c.Ratio = c.Median / c.RefMedian
	if c.N < MinRuns || c.RefN < MinRuns {
		c.Outcome = TooFew
		return c, true
	}
	c.CILow, c.CIHigh = RatioCI(x, ref)
	c.HasCI = true
	c.Outcome = Judge(c.N, c.RefN, c.CILow, c.CIHigh, higherIsBetter)
	return c, true
}

// Judge decides the outcome from the run counts and the interval of the
// ratio; Compare uses it, and so does reading a result written before the
// minimum-runs rule was recorded.
func Judge(n, refN int, lo, hi float64, higherIsBetter bool) Outcome {
	switch {
	case n < MinRuns || refN < MinRuns:
		return TooFew
	case lo > 1 && higherIsBetter, hi < 1 && !higherIsBetter:
		return Better
	case lo > 1, hi < 1:
		return Worse
	}
	return Unclear
}
