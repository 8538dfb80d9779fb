package steer

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestMetricsExportedAtZero: before any period, every labelled counter
// has a zero series for each queue IRQ known at start (and each domain),
// so rate() and a dashboard see "0 moves", not "no data".
func TestMetricsExportedAtZero(t *testing.T) {
	snap := readHost(t, "x86-2socket-mlx5")
	irqs := QueueIRQsOf(snap)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.Start(irqs, nodeTopology(t, snap))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]int{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			if c := mt.GetCounter(); c != nil && c.GetValue() != 0 {
				t.Errorf("%s starts at %v", f.GetName(), c.GetValue())
			}
			series[f.GetName()]++
		}
	}
	for name, want := range map[string]int{"redline_steer_moves_total": len(irqs), "redline_steer_drift_total": len(irqs),
		"redline_steer_queue_received_total": len(irqs), "redline_steer_queue_packets_total": 2 * len(irqs)} {
		if len(irqs) == 0 || series[name] < want {
			t.Errorf("%s: %d series at start, want %d (%d queue IRQs)", name, series[name], want, len(irqs))
		}
	}
}

// redline_build_info says which redline runs, and redline_steer_dry_run
// whether its moves were made (issue 41).
func TestMetricsBuildInfoAndDryRun(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m.SetBuild("v1.2.3")
	m.SetDryRun(true)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			if g := mt.GetGauge(); g != nil {
				got[f.GetName()] = g.GetValue()
				for _, l := range mt.GetLabel() {
					if l.GetName() == "version" && l.GetValue() != "v1.2.3" {
						t.Errorf("version label %q", l.GetValue())
					}
				}
			}
		}
	}
	if got["redline_build_info"] != 1 || got["redline_steer_dry_run"] != 1 {
		t.Errorf("build_info %v, dry_run %v; want 1 and 1", got["redline_build_info"], got["redline_steer_dry_run"])
	}
}
