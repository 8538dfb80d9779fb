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

// compare is stats.Compare, the one verdict, as a report shows it: in
// words's vocabulary, nil when there is no ratio to form. d spreads the
// error rate over the report's comparisons.
func compare(x, ref []float64, higherIsBetter bool, words stats.Words, d stats.Design) *Versus {
	c, ok := stats.Compare(x, ref, higherIsBetter, d)
	if !ok {
		return nil
	}
	return &Versus{N: c.N, RefN: c.RefN, Ratio: c.Ratio, HigherIsBetter: higherIsBetter, Change: stats.Change(c.Ratio, higherIsBetter), CILow: c.CILow, CIHigh: c.CIHigh, HasCI: c.HasCI, Level: c.Level,
		Verdict: words.Verdict(c.Outcome), ComputedBy: "report"}
}
