package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"redline/internal/benchdata"
)

// capacityDoc is a bench --slo document: a search of capacity rps with a
// curve that holds up to it and fails beyond.
func capacityDoc(rps float64) *benchdata.Document {
	// Each search's summary is of a different step rate: still one row.
	c := &benchdata.Capacity{Targets: []benchdata.SLOTarget{{Name: "p99", Percentile: 99, TargetMS: 1}}, Found: true,
		RPS: rps, Low: rps * 0.98, High: rps * 1.02, Level: 0.95, StepSeconds: 1, Steps: 4}
	for i, f := range []float64{0.5, 0.9, 1.01, 1.3} {
		p99 := 0.3 / (1.05 - f*0.8)
		st := benchdata.CurveStep{Seq: i + 1, OfferedRPS: f * rps, AchievedRPS: f * rps, Latency: benchdata.Latency{P50: 0.2, P99: p99, P999: 2 * p99},
			Percentiles: []float64{p99}, Holds: p99 <= 1}
		if !st.Holds {
			st.Why = "p99 > 1ms"
		}
		c.Curve = append(c.Curve, st)
	}
	sum := &benchdata.Summary{Schema: benchdata.SchemaVersion, Title: "GET", Command: "GET key:__rand_int__", RPS: rps * 0.9, Config: benchdata.RunConfig{Rate: rps * 0.9, Clients: 50, Pipeline: 1},
		Requests: int64(rps), Latency: c.Curve[1].Latency, Capacity: c, Start: time.Unix(1e9, 0)}
	return &benchdata.Document{Schema: benchdata.DocumentSchema, Results: []*benchdata.Summary{sum}}
}

// TestCapacityCurves: searches from two files are overlaid in one chart
// (log latency axis, target line, knees), tabled with their ratio, and
// written as CSV rows, one per step.
func TestCapacityCurves(t *testing.T) {
	srcs := []*Source{{Path: "base.json", Label: "base", Bench: capacityDoc(50000)}, {Path: "tuned.json", Label: "tuned", Bench: capacityDoc(65000)}}
	r, err := Merge(srcs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var h bytes.Buffer
	if err := WriteHTML(&h, r); err != nil {
		t.Fatal(err)
	}
	html := h.String()
	for _, want := range []string{"Throughput-latency curves for GET", "target p99 1 ms", "offered rate (requests/s, open loop)", "×1.30", "65,000/s [63,700, 66,300]", `fill="#fff"`} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	var m bytes.Buffer
	if err := WriteMarkdown(&m, r); err != nil {
		t.Fatal(err)
	}
	if md := m.String(); !strings.Contains(md, "## Capacity at the latency target") || !strings.Contains(md, "fails: p99 > 1ms") {
		t.Errorf("Markdown:\n%s", md)
	}
	var c bytes.Buffer
	if err := Write(&c, r, Curves); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&c).ReadAll()
	if err != nil || len(rows) != 1+8 || rows[0][0] != "workload" || rows[1][1] != "base" || rows[8][15] != "false" {
		t.Fatalf("CSV %v %v", rows, err)
	}
}
