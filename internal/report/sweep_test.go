package report

import (
	"strings"
	"testing"

	"redline/internal/benchdata"
	"redline/internal/labdata"
)

// TestSweepReport: runs of a swept workload are drawn and tabled against
// the swept value, per variant, with the median's interval once there are
// enough runs.
func TestSweepReport(t *testing.T) {
	res := &labdata.Result{Schema: labdata.ResultSchema, Complete: true,
		Variants: []labdata.VariantInfo{{Name: "baseline", Baseline: true}, {Name: "io2"}}}
	for _, v := range []string{"baseline", "io2"} {
		for i, d := range []string{"3", "3000", "100000"} {
			for rep := range 6 {
				rps := 100000 / float64(i+1)
				res.Runs = append(res.Runs, labdata.Run{Seq: len(res.Runs) + 1, Variant: v, Workload: "values[d=" + d + "]", Rep: rep + 1,
					Sweep:   &labdata.SweepPoint{Workload: "values", Param: "d", Value: d},
					Summary: &benchdata.Summary{Title: "SET", RPS: rps + float64(rep*100), Requests: 1000, Latency: benchdata.Latency{P99: 0.5 + float64(i)}}})
			}
		}
	}
	r := FromResult(res, "result.json")
	md := string(render(t, r, Markdown))
	for _, want := range []string{"## Sweeps", "**values SET: throughput (requests/s) against d**", "| d=3000 | 50,250 [50,000, 50,500] |", "p99 latency (ms) against d"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
	html := string(render(t, r, HTML))
	if !strings.Contains(html, `<section id="sweeps">`) || strings.Count(html, "against d") < 4 || !strings.Contains(html, "<polyline") {
		t.Errorf("HTML has no sweep charts")
	}
}
