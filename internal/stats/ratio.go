package stats

import (
	"fmt"
	"math"
	"strconv"
)

// The one convention for a comparison's ratio, in every output (the
// terminal, Markdown, HTML, the JSON's "ratio", "ci_low", "ci_high"): it
// is this group's value divided by the reference's, for every metric,
// printed with a leading "×" ("×1.095"). Whether a ratio above 1 is good
// depends on the metric (throughput: higher is better; latency and
// spread: lower is better), so wherever a person reads one, a word says
// which way it went: better or worse.

// Direction is "better", "worse" or "same" (the ratio rounds to 1.000)
// for ratio r of a metric where higher is better or not.
func Direction(r float64, higherIsBetter bool) string {
	switch {
	case math.Round(r*1000) == 1000 || r <= 0:
		return "same"
	case (r > 1) == higherIsBetter:
		return "better"
	}
	return "worse"
}

// Change is ratio r in words: "9.5% worse", "15.2% better", "no change";
// the percentage is |r-1|, so 1.095 of a latency is 9.5% worse and 0.91
// is 9.0% better.
func Change(r float64, higherIsBetter bool) string {
	d := Direction(r, higherIsBetter)
	if d == "same" {
		return "no change"
	}
	return fmt.Sprintf("%.1f%% %s", 100*math.Abs(r-1), d)
}

// FormatRatio is ratio r as every report prints it: "×1.095 (9.5% worse)".
func FormatRatio(r float64, higherIsBetter bool) string {
	return RatioNumber(r) + " (" + Change(r, higherIsBetter) + ")"
}

// RatioNumber is r alone, "×1.095", for an interval's ends and axes.
func RatioNumber(r float64) string { return "×" + strconv.FormatFloat(r, 'f', 3, 64) }
