package report

import (
	"regexp"
	"strings"
	"testing"
)

// TestChangeChartOneAxisOneConvention: the glance chart plots each
// metric's ratio as stored (this ÷ reference), so a p99 of ×1.095 is
// right of ×1 and marked worse; the panels of a workload share one axis
// (the same ticks at the same places); an interval past the axis' edge is
// marked with an arrowhead and its value, not clipped silently.
func TestChangeChartOneAxisOneConvention(t *testing.T) {
	ref := &Group{Label: "base", Reference: true}
	g := &Group{Label: "tuned",
		VsThroughput: &Versus{Ratio: 1.05, CILow: 1.01, CIHigh: 1.09, HasCI: true, HigherIsBetter: true, Verdict: "helps"},
		VsP99:        &Versus{Ratio: 1.095, CILow: 1.02, CIHigh: 40, HasCI: true, Verdict: "hurts"}}
	svg := changeChart(&Report{Reference: "base"}, &Workload{Name: "set", Groups: []*Group{ref, g}})
	if strings.Contains(svg, "times lower") || !strings.Contains(svg, "p99 latency (× the reference&#39;s; lower is better)") {
		t.Errorf("p99 panel title:\n%s", svg)
	}
	if !strings.Contains(svg, "hurts (9.5% worse)") || !strings.Contains(svg, "helps (5.0% better)") {
		t.Errorf("verdicts without their words:\n%s", svg)
	}
	// Two panels, one axis: each tick label appears once per panel at the
	// same x.
	ticks := regexp.MustCompile(`<text x="([0-9.]+)" y="[0-9.]+" text-anchor="middle" class="tick">(×[0-9.]+)</text>`).FindAllStringSubmatch(svg, -1)
	at := map[string]map[string]int{}
	for _, m := range ticks {
		if at[m[2]] == nil {
			at[m[2]] = map[string]int{}
		}
		at[m[2]][m[1]]++
	}
	for label, xs := range at {
		if len(xs) != 1 {
			t.Errorf("tick %s at several places %v: the panels do not share an axis", label, xs)
		}
	}
	if !strings.Contains(svg, `class="beyond bad"`) || !strings.Contains(svg, "×40.000") {
		t.Errorf("the p99 interval up to ×40 runs past the ×10 edge unmarked:\n%s", svg)
	}
}
