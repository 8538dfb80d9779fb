package lab

import (
	"math/rand/v2"
	"testing"

	"redline/internal/benchdata"
	"redline/internal/labdata"
	"redline/internal/stats"
)

func TestVerdicts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	noisy := func(center, spread float64, n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = center + (r.Float64()-0.5)*spread
		}
		return v
	}
	base := noisy(100000, 2000, 7)
	cases := []struct {
		name   string
		vals   []float64
		higher bool
		want   string
	}{
		{"clear gain", noisy(120000, 2000, 7), true, stats.LabWords.Better},
		{"clear loss", noisy(80000, 2000, 7), true, stats.LabWords.Worse},
		{"noise", noisy(100500, 2000, 7), true, stats.LabWords.Unclear},
		{"latency down is good", noisy(80000, 2000, 7), false, stats.LabWords.Better},
		{"too few runs", noisy(150000, 10, 2), true, stats.VerdictTooFew},
	}
	for _, c := range cases {
		got, _ := compare(stats.Design{Alpha: 0.05, Comparisons: 1, Looks: 1}, "w", "v", "b", "rps", c.higher, c.vals, base)
		if got.Verdict != c.want {
			t.Errorf("%s: verdict %q (ratio %.3f CI %.3f..%.3f), want %q", c.name, got.Verdict, got.Ratio, got.CILow, got.CIHigh, c.want)
		}
		if got.HasCI && (got.CILow > got.Ratio || got.CIHigh < got.Ratio) {
			t.Errorf("%s: ratio %.3f outside its CI %.3f..%.3f", c.name, got.Ratio, got.CILow, got.CIHigh)
		}
	}
}

// TestConnectComparisons: a workload with connect: true is compared on
// connect p99, set-up time and connect success with the same verdict; a
// variant whose connects no longer wait for the SYN retransmit helps on
// the first two, and one that no longer runs out of ports on the third.
// A workload without it gets no connect comparisons.
func TestConnectComparisons(t *testing.T) {
	s := labdata.Scenario{
		Workloads: []labdata.WorkloadSpec{{Name: "storm", Connect: true}, {Name: "plain"}},
		Variants:  []labdata.VariantSpec{{Name: "base", Baseline: true}, {Name: "net-sysctl"}},
	}
	run := func(w, v string, i int, p99, setup float64, opened, failed int64) labdata.Run {
		return labdata.Run{Workload: w, Variant: v, Summary: &benchdata.Summary{RPS: 1000 + float64(i), Requests: 1000,
			Latency: benchdata.Latency{P99: 1 + float64(i)/100},
			Connections: &benchdata.Connections{Opened: opened, SetupSeconds: setup, Connect: benchdata.Latency{P99: p99},
				Failures: map[string]int64{"EADDRNOTAVAIL": failed}}}}
	}
	r := &labdata.Result{}
	for i := range 8 {
		for _, w := range []string{"storm/PING_INLINE", "plain"} {
			r.Runs = append(r.Runs, run(w, "base", i, 1030+float64(i), 4+float64(i)/10, 4000+int64(i), 1000-int64(i)),
				run(w, "net-sysctl", i, 0.4+float64(i)/100, 1+float64(i)/10, 5000, 0))
		}
	}
	got := map[string]string{}
	for _, c := range comparisons(r, s) {
		got[c.Workload+" "+c.Metric] = c.Verdict
	}
	for _, m := range []string{"connect_p99_ms", "setup_s", "connect_success"} {
		if v := got["storm/PING_INLINE "+m]; v != stats.LabWords.Better {
			t.Errorf("storm %s: verdict %q, want %q", m, v, stats.LabWords.Better)
		}
		if v, ok := got["plain "+m]; ok {
			t.Errorf("plain %s compared (%q) without connect: true", m, v)
		}
	}
	if q := design(s, 2, 1); q.Comparisons != 2*stats.MetricsPerComparison+ConnectMetrics {
		t.Errorf("design counts %d comparisons, want the connect ones too", q.Comparisons)
	}
}
