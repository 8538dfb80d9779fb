package bench

import (
	"testing"
	"time"

	"redline/internal/benchdata"
)

// TestMergeWorkersFailover (issue 40): MergeWorkers kept the first
// worker's failover figures only. Counts add up, each worker's seconds
// and outages move onto the merged timeline, overlapping outages are one
// (ending when the last worker recovered), and the straddled latencies
// merge exactly.
func TestMergeWorkersFailover(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	part := func(n int, start time.Time, f *benchdata.Failover, straddled ...int64) WorkerPart {
		h := benchdata.NewHistogram(DefaultPrecision)
		s := &benchdata.Summary{Title: "DEL", Start: start, End: start.Add(4 * time.Second), ElapsedSeconds: 4, Requests: 100,
			Histogram: h, Failover: f, Errors: f.FailedRequests, ErrorsByType: map[string]int64{"refused": f.FailedRequests}}
		for i := range 100 {
			h.RecordValue(int64(i+1) * 1000)
		}
		if len(f.Outages) > 0 {
			sh := newConnHist()
			for _, v := range straddled {
				sh.RecordValue(v)
			}
			f.Outages[0].StraddledHistogram = &benchdata.Histogram{Histogram: sh}
			f.Outages[0].Straddled = sh.TotalCount()
			straddledDigest(&f.Outages[0])
		}
		return WorkerPart{Worker: n, Summary: s}
	}
	a := &benchdata.Failover{FailedRequests: 3, FailedConnects: 10, Reconnects: 4, Primary: "10.0.0.1:6379", Switches: 1,
		Seconds: []benchdata.FailureSecond{{Second: 1, OK: 50, Failures: map[string]int64{"refused": 13}}},
		Outages: []benchdata.Outage{{StartSeconds: 1.2, EndSeconds: 1.7, Seconds: 0.5, FirstSecond: 1, LastSecond: 1, Recovered: true,
			FailedRequests: 3, Failures: map[string]int64{"refused": 13}}}}
	// The second worker started 10 ms later: its outage at 1.19-1.71 is
	// 1.20-1.72 on the merged timeline, and overlaps the first's.
	b := &benchdata.Failover{FailedRequests: 5, FailedConnects: 6, Reconnects: 4, Primary: "10.0.0.1:6379", Switches: 1,
		Seconds: []benchdata.FailureSecond{{Second: 1, OK: 40, Failures: map[string]int64{"refused": 6, "reset": 5}}},
		Outages: []benchdata.Outage{{StartSeconds: 1.19, EndSeconds: 1.71, Seconds: 0.52, FirstSecond: 1, LastSecond: 1, Recovered: true,
			FailedRequests: 5, Failures: map[string]int64{"refused": 6, "reset": 5}}}}
	m, err := MergeWorkers([]WorkerPart{
		part(1, t0, a, 1e6, 2e6, 3e6),
		part(2, t0.Add(10*time.Millisecond), b, 4e6, 5e6, 6e6, 7e6, 8e6, 9e6, 10e6),
	})
	if err != nil {
		t.Fatal(err)
	}
	f := m.Failover
	if f == nil || f.FailedRequests != 8 || f.FailedConnects != 16 || f.Reconnects != 8 || f.Switches != 1 || f.Primary != "10.0.0.1:6379" {
		t.Fatalf("merged failover %+v", f)
	}
	if m.Errors != 8 {
		t.Errorf("merged errors %d, want 8", m.Errors)
	}
	if len(f.Seconds) != 1 || f.Seconds[0].Second != 1 || f.Seconds[0].OK != 90 || f.Seconds[0].Failures["refused"] != 19 || f.Seconds[0].Failures["reset"] != 5 {
		t.Errorf("merged seconds %+v", f.Seconds)
	}
	if len(f.Outages) != 1 {
		t.Fatalf("merged outages %+v, want one", f.Outages)
	}
	o := f.Outages[0]
	near := func(x, want float64) bool { return x > want-1e-9 && x < want+1e-9 }
	if !near(o.StartSeconds, 1.2) || !near(o.EndSeconds, 1.72) || !near(o.Seconds, 0.52) || !o.Recovered || o.FailedRequests != 8 ||
		o.Failures["refused"] != 19 || o.Failures["reset"] != 5 {
		t.Errorf("merged outage %+v", o)
	}
	// Exact over the union of 1..10 ms: the p50 is 5 ms, never an
	// average of the workers' p50s (2 and 7 ms), within the histograms' 1%.
	if o.Straddled != 10 || o.StraddledMaxMs < 9.9 || o.StraddledMaxMs > 10.1 || o.StraddledP50Ms < 4.95 || o.StraddledP50Ms > 5.05 {
		t.Errorf("straddled %d, p50 %.3f, max %.3f", o.Straddled, o.StraddledP50Ms, o.StraddledMaxMs)
	}
	// Outages apart stay two; an unrecovered one stays unrecovered.
	c := &benchdata.Failover{FailedRequests: 1, Outages: []benchdata.Outage{{StartSeconds: 3.5, EndSeconds: 3.6, Seconds: 0.1, FirstSecond: 3, LastSecond: 3, FailedRequests: 1}}}
	m, err = MergeWorkers([]WorkerPart{part(1, t0, a, 1e6), part(2, t0, c)})
	if err != nil {
		t.Fatal(err)
	}
	if os := m.Failover.Outages; len(os) != 2 || !os[0].Recovered || os[1].Recovered || os[1].FirstSecond != 3 {
		t.Errorf("outages apart: %+v", os)
	}
	// No worker with --reconnect: no failover.
	m, _ = MergeWorkers([]WorkerPart{{Worker: 1, Summary: &benchdata.Summary{Histogram: benchdata.NewHistogram(3)}}})
	if m.Failover != nil {
		t.Errorf("failover %+v without --reconnect", m.Failover)
	}
}
