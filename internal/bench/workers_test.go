package bench

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"redline/internal/benchdata"
)

// TestMergeWorkersExactPercentiles records two processes' samples into
// their own histograms, passes them through JSON as the processes' files
// do, merges them, and compares every percentile with a histogram of the
// union of the samples. Averaging the two p99s would be far off: one
// worker is ten times slower.
func TestMergeWorkersExactPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	union := benchdata.NewHistogram(3)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var parts []WorkerPart
	for w, scale := range []float64{50_000, 500_000} { // ns: a fast and an overloaded worker
		h := benchdata.NewHistogram(3)
		for range 20000 + 5000*w {
			v := int64(scale * rng.ExpFloat64())
			h.RecordValue(max(v, 1))
			union.RecordValue(max(v, 1))
		}
		s := &benchdata.Summary{Title: "SET", Requests: h.TotalCount(), Histogram: h, Latency: benchdata.Digest(h.Histogram),
			Start: start.Add(time.Duration(w) * time.Millisecond), End: start.Add(time.Second), Config: benchdata.RunConfig{Clients: 10}}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back benchdata.Summary
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, WorkerPart{Worker: w + 1, Summary: &back})
	}
	m, err := MergeWorkers(parts)
	if err != nil {
		t.Fatal(err)
	}
	if want := benchdata.Digest(union.Histogram); m.Latency != want {
		t.Errorf("merged latency %+v, want the union's %+v", m.Latency, want)
	}
	if m.Requests != union.TotalCount() || m.Config.Clients != 20 || len(m.Workers) != 2 || m.ElapsedSeconds != 1 {
		t.Errorf("merged %d requests, %d clients, %d workers, %v s", m.Requests, m.Config.Clients, len(m.Workers), m.ElapsedSeconds)
	}
	avg := (parts[0].Summary.Latency.P99 + parts[1].Summary.Latency.P99) / 2
	t.Logf("p99: merged %.3f ms, union %.3f ms, average of the two %.3f ms", m.Latency.P99, benchdata.Digest(union.Histogram).P99, avg)
}

func TestShares(t *testing.T) {
	got := Shares(10, 3)
	if got[0] != 4 || got[1] != 3 || got[2] != 3 {
		t.Errorf("Shares(10, 3) = %v", got)
	}
}
