package bench

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"redline/internal/benchdata"
	"redline/internal/redistest"
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

// workerSummary is a minimal recorded Summary of one worker.
func workerSummary(t *testing.T, n int64, start time.Time, c *benchdata.Connections) *benchdata.Summary {
	t.Helper()
	h := benchdata.NewHistogram(3)
	for i := range n {
		h.RecordValue(1000 + i)
	}
	return &benchdata.Summary{Requests: n, Histogram: h, Start: start, End: start.Add(time.Second), Connections: c,
		Config: benchdata.RunConfig{Clients: 2}}
}

// TestMergeWorkersKernelEvidence: the server's counters are one
// namespace's, read by each worker over overlapping intervals: kept once,
// not summed; the client's are summed by no one: kept whole when the
// workers share a host (the widest reading), and only per worker when
// they ran on two hosts.
func TestMergeWorkersKernelEvidence(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	conns := func(overflows, opens uint64) *benchdata.Connections {
		return &benchdata.Connections{Opened: 100, PerSecond: 100, Kernel: &benchdata.NetEvidence{
			Server: &benchdata.ServerNet{ListenOverflows: overflows, PassiveOpens: opens},
			Client: &benchdata.ClientNet{ActiveOpens: opens}}}
	}
	for _, hosts := range [][2]string{{"", ""}, {"a", "b"}} {
		parts := []WorkerPart{
			{Worker: 1, Host: hosts[0], Summary: workerSummary(t, 10, start, conns(3, 150))},
			{Worker: 2, Host: hosts[1], Summary: workerSummary(t, 10, start.Add(time.Second), conns(5, 200))},
		}
		m, err := MergeWorkers(parts)
		if err != nil {
			t.Fatal(err)
		}
		k := m.Connections.Kernel
		if k == nil || k.Server == nil || k.Server.ListenOverflows != 5 || k.Server.PassiveOpens != 200 {
			t.Fatalf("hosts %q: merged server evidence %+v, want the widest reading (5 overflows), not a sum", hosts, k)
		}
		if oneHost := hosts[0] == hosts[1]; (k.Client != nil) != oneHost || (oneHost && k.Client.ActiveOpens != 200) {
			t.Errorf("hosts %q: merged client evidence %+v", hosts, k.Client)
		}
		if len(k.Problems) != 1 || m.Workers[0].Kernel == nil || m.Workers[1].Kernel.Client.ActiveOpens != 200 {
			t.Errorf("hosts %q: problems %q, per-worker evidence %+v %+v", hosts, k.Problems, m.Workers[0].Kernel, m.Workers[1].Kernel)
		}
		if m.Connections.Opened != 200 || m.Connections.PerSecond != 100 { // 200 over the merged 2 s
			t.Errorf("hosts %q: %d opened, %.1f per second", hosts, m.Connections.Opened, m.Connections.PerSecond)
		}
	}
}

// TestMergeWorkersIdentity: a worker that failed without a result keeps
// its number and host, and the ones after it keep theirs; its error is
// the merged error, it is counted in workers_failed, and the merged
// configuration is what was asked of all three, not the survivors' sum.
func TestMergeWorkersIdentity(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	share := WorkerShare{Clients: 2, Requests: 100}
	parts := []WorkerPart{
		{Worker: 1, Host: "a", Share: share, Summary: workerSummary(t, 10, start, nil)},
		{Worker: 2, Host: "b", Share: share, Err: errors.New("lost")},
		{Worker: 3, Host: "c", Share: share, Summary: workerSummary(t, 20, start, nil)},
	}
	m, err := MergeWorkers(parts)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range m.Workers {
		if w.Worker != i+1 || w.Host != parts[i].Host {
			t.Errorf("line %d is worker %d on %q, want %d on %q", i, w.Worker, w.Host, i+1, parts[i].Host)
		}
	}
	if m.Workers[1].Error != "lost" || m.Workers[2].Requests != 20 || m.Requests != 30 {
		t.Errorf("workers %+v, %d requests", m.Workers, m.Requests)
	}
	if m.WorkersFailed != 1 || m.Error != "worker 2 (b): lost" || m.Config.Clients != 6 || m.Config.Requests != 300 {
		t.Errorf("failed %d, error %q, config %d clients %d requests", m.WorkersFailed, m.Error, m.Config.Clients, m.Config.Requests)
	}
	var b strings.Builder
	writeWorkerLines(&b, "", m)
	if !strings.Contains(b.String(), "worker 2 (b): 0 clients, 0 requests") || !strings.Contains(b.String(), "error: lost") {
		t.Errorf("lines:\n%s", b.String())
	}
}

// TestReplayTicks: tick i of each worker covers the same interval (the
// common start), so the merged tick's rate is the sum and its p99 the
// union's, exactly; a worker whose share ended sooner leaves the others'.
func TestReplayTicks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var parts [][]WorkerTick
	var unions []*benchdata.Histogram
	for w, scale := range []float64{50_000, 900_000} {
		var ticks []WorkerTick
		for i := range 3 - w { // the second worker ticks once less
			h := benchdata.NewHistogram(tickPrecision)
			for range 1000 {
				v := max(int64(scale*rng.ExpFloat64()), 1)
				h.RecordValue(v)
				if len(unions) <= i {
					unions = append(unions, benchdata.NewHistogram(tickPrecision))
				}
				unions[i].RecordValue(v)
			}
			ticks = append(ticks, WorkerTick{Elapsed: time.Duration(i+1) * time.Second, Requests: 1000, RPS: 1000, Histogram: h})
		}
		parts = append(parts, ticks)
	}
	var got []Progress
	replayTicks(parts, func(p Progress) { got = append(got, p) })
	if len(got) != 3 {
		t.Fatalf("%d merged ticks, want 3", len(got))
	}
	for i, p := range got {
		want := float64(unions[i].ValueAtPercentile(99)) / 1e6
		if p.IntervalP99 != want {
			t.Errorf("tick %d: p99 %.3f ms, the union's %.3f", i, p.IntervalP99, want)
		}
		if rps := []float64{2000, 2000, 1000}[i]; p.IntervalRPS != rps {
			t.Errorf("tick %d: %.0f requests per second, want %.0f", i, p.IntervalRPS, rps)
		}
	}
}

// TestRunStartAtRelease runs three workers with different set-up (1, 20
// and 60 clients) held by one Ready released after 2 s: each reports its
// Start at the release, not the release plus its own set-up and wait, so
// the merged interval is no longer than the longest part's.
func TestRunStartAtRelease(t *testing.T) {
	s := redistest.Start(t)
	tests, _ := SuiteTests([]string{"ping_mbulk"}, false)
	release := make(chan struct{})
	var waiting sync.WaitGroup
	ready := func(ctx context.Context) error {
		waiting.Done()
		<-release
		return nil
	}
	clients := []int{1, 20, 60}
	parts := make([]WorkerPart, len(clients))
	var runs sync.WaitGroup
	waiting.Add(len(clients))
	for i, c := range clients {
		o := testOptions(s)
		o.Clients, o.Requests, o.Ready, o.Seed = c, 3000, ready, uint64(i)
		runs.Add(1)
		go func() {
			defer runs.Done()
			sum, err := Run(context.Background(), o, tests[0], nil)
			parts[i] = WorkerPart{Worker: i + 1, Summary: sum, Err: err}
		}()
	}
	waiting.Wait()
	time.Sleep(2 * time.Second)
	released := time.Now()
	close(release)
	runs.Wait()
	var longest float64
	for _, p := range parts {
		if p.Err != nil {
			t.Fatal(p.Err)
		}
		if d := p.Summary.Start.Sub(released); d < -time.Millisecond || d > 500*time.Millisecond {
			t.Errorf("worker %d: Start %v after the release, want about 0", p.Worker, d)
		}
		longest = max(longest, p.Summary.ElapsedSeconds)
	}
	m, err := MergeWorkers(parts)
	if err != nil {
		t.Fatal(err)
	}
	if m.ElapsedSeconds > longest+0.5 {
		t.Errorf("merged elapsed %.3fs, longest part %.3fs: set-up counted as run time", m.ElapsedSeconds, longest)
	}
}
