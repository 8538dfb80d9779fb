package bench

import (
	"context"
	"testing"
	"time"

	"redline/internal/benchdata"
	"redline/internal/testutil/svcserver"
)

// capacityStep is the StepFunc of a search with o: one bench.Run per
// step, as bench --slo runs it without --workers.
func capacityStep(o Options, t Test) StepFunc {
	return func(ctx context.Context, rate float64, warmup, dur time.Duration) (*benchdata.Summary, error) {
		so := o
		so.Rate, so.Warmup, so.Duration, so.Requests = rate, warmup, dur, 0
		so.Drain = max(dur/2, 100*time.Millisecond)
		return Run(ctx, so, t, nil)
	}
}

// TestCapacityServiceTimeServer runs real searches against a server
// whose capacity is known (one thread, 1 ms per command: 1000/s). No
// timing bound is asserted (the machine may be loaded, which only makes
// a server slower): the search must find a capacity, and its interval
// must not claim more than the server can serve.
func TestCapacityServiceTimeServer(t *testing.T) {
	const service = time.Millisecond
	srv, err := svcserver.Start(svcserver.Options{Service: service})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	o := DefaultOptions()
	o.Addr, o.Clients = srv.Addr(), 20
	co := DefaultCapacityOptions([]SLO{{Name: "p99", Percentile: 99, Target: 50 * time.Millisecond}})
	co.Step, co.StepWarmup, co.Budget, co.Precision = 500*time.Millisecond, 100*time.Millisecond, 30*time.Second, 0.03
	sum, err := FindCapacity(context.Background(), co, capacityStep(o, Test{Title: "PING_MBULK", Args: []string{"PING"}}))
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Capacity
	t.Logf("capacity %.0f [%.0f, %.0f] in %d steps, %.1f s (true 1000)", c.RPS, c.Low, c.High, c.Steps, c.Seconds)
	if !c.Found || c.High > 1100 || len(c.Curve) != c.Steps {
		t.Fatalf("found %v, capacity %.0f [%.0f, %.0f]: want one, at most 1100/s (the server serves 1000/s)", c.Found, c.RPS, c.Low, c.High)
	}
	if sum.Config.Rate == 0 || sum.Config.Rate > c.RPS*1.0001 || sum.Histogram == nil {
		t.Errorf("the summary is of rate %.0f, want a step held at or below the capacity", sum.Config.Rate)
	}
}
