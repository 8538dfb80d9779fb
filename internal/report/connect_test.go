package report

import (
	"bytes"
	"strings"
	"testing"

	"redline/internal/labdata"
)

// TestConnectSection: the lab's connection set-up comparisons (a workload
// with connect: true) are in both reports with their verdicts and
// reasons; a lab without them has no such section.
func TestConnectSection(t *testing.T) {
	res := mustLoad(t, "lab.json").Result
	plain := FromResult(res, "lab.json")
	var md bytes.Buffer
	if err := WriteMarkdown(&md, plain); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md.String(), "Connection set-up") {
		t.Error("a lab without connect comparisons has a connection section")
	}
	res.Comparisons = append(res.Comparisons,
		labdata.Comparison{Workload: "storm/SET", Variant: "tuned", Baseline: "baseline", Metric: "connect_p99_ms",
			N: 11, BaselineN: 11, Median: 61.2, BaselineMedian: 1040, Ratio: 0.06, CILow: 0.03, CIHigh: 0.13, HasCI: true, Verdict: "helps", Paired: true},
		labdata.Comparison{Workload: "storm/SET", Variant: "tuned", Baseline: "baseline", Metric: "connect_success", HigherIsBetter: true,
			N: 11, BaselineN: 11, Median: 1, BaselineMedian: 1, Ratio: 1, CILow: 1, CIHigh: 1, HasCI: true, Verdict: "no clear change",
			Reason: "any change is within +0.0%..+0.0%, inside the 3% precision", Paired: true})
	r := FromResult(res, "lab.json")
	var md2, html bytes.Buffer
	if err := WriteMarkdown(&md2, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&html, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Connection set-up", "connect p99 (ms, lower is better)", "×0.060 (94.0% better) [0.030, 0.130]", "helps",
		"connects that succeeded", "inside the 3% precision", "1040"} {
		if !strings.Contains(md2.String(), want) {
			t.Errorf("Markdown lacks %q", want)
		}
		if !strings.Contains(html.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}
