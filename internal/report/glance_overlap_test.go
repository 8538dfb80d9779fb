package report

import (
	"regexp"
	"strconv"
	"testing"
)

// TestChangeChartTextsDoNotOverlap: in a lab's glance chart the spread
// panel's title ran into its "← better", a value past the low edge was
// written over the row's label and one past the high edge over its
// verdict, and long verdicts were cut at the chart's edge (issue 41). Every
// text's box (its length at the CSS font size's widest average character,
// the font's height) is apart from every other's and inside the chart.
func TestChangeChartTextsDoNotOverlap(t *testing.T) {
	ref := &Group{Label: "baseline", Reference: true}
	tuned := &Group{Label: "tuned",
		VsThroughput: &Versus{Ratio: 0.841, CILow: 0.8, CIHigh: 0.9, HasCI: true, HigherIsBetter: true, Verdict: "too few runs"},
		VsP99:        &Versus{Ratio: 2.379, Verdict: "too few runs"},
		VsSpread:     &Versus{Ratio: 0.871, Verdict: "too few runs"}}
	split := &Group{Label: "split-cpus",
		VsThroughput: &Versus{Ratio: 0.078, CILow: 0.05, CIHigh: 0.3, HasCI: true, HigherIsBetter: true, Verdict: "too few runs"},
		VsP99:        &Versus{Ratio: 53.406, CILow: 20, CIHigh: 80, HasCI: true, Verdict: "too few runs"},
		VsSpread:     &Versus{Ratio: 1.05, Verdict: "too few runs"}}
	svg := changeChart(&Report{Reference: "baseline"}, &Workload{Name: "set-get/SET", Groups: []*Group{ref, tuned, split}})
	width, _ := strconv.ParseFloat(regexp.MustCompile(`viewBox="0 0 ([0-9.]+) `).FindStringSubmatch(svg)[1], 64)
	size := map[string]float64{"label": 12, "value": 12, "title": 13, "axis": 12, "tick": 11}
	type box struct {
		text                     string
		left, right, top, bottom float64
	}
	var boxes []box
	for _, m := range regexp.MustCompile(`<text x="([0-9.]+)" y="([0-9.]+)" text-anchor="(\w+)" class="(\w+)[^"]*">([^<]*)</text>`).FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		px := size[m[4]]
		if px == 0 {
			t.Fatalf("text of class %q: no size known", m[4])
		}
		w := float64(len([]rune(m[5]))) * px * 0.56
		b := box{text: m[5], top: y - 0.75*px, bottom: y + 0.2*px}
		switch m[3] {
		case "start":
			b.left, b.right = x, x+w
		case "end":
			b.left, b.right = x-w, x
		default:
			b.left, b.right = x-w/2, x+w/2
		}
		if b.left < 0 || b.right > width {
			t.Errorf("%q runs past the chart (%.0f..%.0f of %.0f)", b.text, b.left, b.right, width)
		}
		boxes = append(boxes, b)
	}
	if len(boxes) < 20 {
		t.Fatalf("%d texts in the chart:\n%s", len(boxes), svg)
	}
	for i, a := range boxes {
		for _, b := range boxes[i+1:] {
			if a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom {
				t.Errorf("%q overlaps %q", a.text, b.text)
			}
		}
	}
}
