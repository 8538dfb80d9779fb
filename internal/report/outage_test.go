package report

import (
	"strings"
	"testing"

	"redline/internal/benchdata"
)

// TestOutageChart: a run with an outage gets a bar and a band over the
// outage's seconds; a workload with none gets no chart.
func TestOutageChart(t *testing.T) {
	sum := &benchdata.Summary{ElapsedSeconds: 3, Failover: &benchdata.Failover{Outages: []benchdata.Outage{
		{StartSeconds: 1, EndSeconds: 1.5, Seconds: 0.5, FailedRequests: 9},
	}}}
	clean := &benchdata.Summary{ElapsedSeconds: 3}
	w := &Workload{Name: "DEL", Groups: []*Group{{Label: "a", samples: []*Sample{{Index: 1, Label: "a", summary: sum}, {Index: 2, Label: "a", summary: clean}}}}}
	r := &Report{}
	svg := outageChart(r, w)
	if strings.Count(svg, `class="outage"`) != 1 || !strings.Contains(svg, "9 failed") || !strings.Contains(svg, "a #1") || strings.Contains(svg, "a #2") {
		t.Errorf("outage chart:\n%s", svg)
	}
	if !strings.Contains(svg, "outage 0.500 s from 1.000 s: 9 requests failed") {
		t.Errorf("the band does not name the outage:\n%s", svg)
	}
	w.Groups[0].samples = w.Groups[0].samples[1:]
	if got := outageChart(r, w); got != "" {
		t.Errorf("a workload without an outage has a chart: %s", got)
	}
}
