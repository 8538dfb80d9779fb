package guard

import (
	"context"
	"os"
	"testing"
	"time"

	"redline/internal/bench"
	"redline/internal/redisadmin"
	"redline/internal/redistest"
	"redline/internal/stats"
)

// TestProbeCost measures what the guard's probe costs the server it
// watches: a closed-loop GET load's requests/s and p99 with and without a
// Monitor at its defaults (100 PING/s open loop, one INFO a second),
// paired and interleaved (ABBA), the ratios' median with its 95%
// interval. It runs only with REDLINE_GUARD_COST=1 (a measurement, not a
// check: docs/benchmarks.md has its figures and command).
func TestProbeCost(t *testing.T) {
	if os.Getenv("REDLINE_GUARD_COST") != "1" {
		t.Skip("a measurement: REDLINE_GUARD_COST=1 runs it")
	}
	s := redistest.Start(t)
	ctx := context.Background()
	o := bench.DefaultOptions()
	o.Addr, o.Clients, o.Requests, o.Duration = s.Addr(), 20, 0, 5*time.Second
	run := func(probe bool) (rps, p99 float64) {
		if probe {
			m, err := StartMonitor(ctx, MonitorOptions{Redis: redisadmin.Options{Addr: s.Addr()}})
			if err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					select {
					case <-stop:
						return
					case <-time.After(m.Interval()):
						m.Tick(ctx)
					}
				}
			}()
			defer func() { close(stop); <-done; m.Close() }()
		}
		tests, _ := bench.SuiteTests([]string{"get"}, false)
		sum, err := bench.Run(ctx, o, tests[0], nil)
		if err != nil {
			t.Fatal(err)
		}
		return sum.RPS, sum.Latency.P99
	}
	// The server's own CPU time per second, idle but for the probe: what
	// the probe takes from it, less sensitive to the machine's other load
	// than the paired throughput.
	admin, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	cpu := func() float64 { i, _ := admin.Info(ctx, "cpu"); return i.CPUSeconds() }
	for _, probe := range []bool{false, true, false, true} {
		var m *Monitor
		if probe {
			m, _ = StartMonitor(ctx, MonitorOptions{Redis: redisadmin.Options{Addr: s.Addr()}})
		}
		c0, t0 := cpu(), time.Now()
		for i := 0; i < 10; i++ {
			time.Sleep(time.Second)
			if m != nil {
				m.Tick(ctx)
			}
		}
		c1, t1 := cpu(), time.Now()
		if m != nil {
			m.Close()
		}
		t.Logf("idle server, probe %v: %.2f ms CPU a second", probe, 1e3*(c1-c0)/t1.Sub(t0).Seconds())
	}
	var rpsRatio, p99Ratio []float64
	for pair := 0; pair < 8; pair++ {
		var r0, p0, r1, p1 float64
		if pair%2 == 0 {
			r0, p0 = run(false)
			r1, p1 = run(true)
		} else {
			r1, p1 = run(true)
			r0, p0 = run(false)
		}
		t.Logf("pair %d: without %.0f rps p99 %.3f ms; with the probe %.0f rps p99 %.3f ms", pair, r0, p0, r1, p1)
		rpsRatio, p99Ratio = append(rpsRatio, r1/r0), append(p99Ratio, p1/p0)
	}
	for _, x := range []struct {
		name string
		v    []float64
	}{{"requests/s", rpsRatio}, {"p99", p99Ratio}} {
		lo, hi, _ := stats.MedianCI(x.v, 0.95)
		t.Logf("%s with/without the probe: median ×%.3f, 95%% interval ×%.3f-×%.3f", x.name, stats.Median(x.v), lo, hi)
	}
}
