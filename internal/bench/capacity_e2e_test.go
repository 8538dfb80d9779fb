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

// TestCapacityServiceTimeServer runs a real search against a server
// whose capacity is known (one thread, 1 ms per command: 1000/s). No
// timing bound is asserted (the machine may be loaded, which only makes
// the server slower, and may leave no rate at which the target holds):
// no step above what the server can serve may hold, nor a capacity
// found claim it.
func TestCapacityServiceTimeServer(t *testing.T) {
	const service = time.Millisecond
	srv, err := svcserver.Start(svcserver.Options{Service: service})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	o := DefaultOptions()
	o.Addr, o.Clients = srv.Addr(), 20
	co := DefaultCapacityOptions([]SLO{{Name: "p90", Percentile: 90, Target: 100 * time.Millisecond}})
	co.Step, co.StepWarmup, co.Budget, co.Precision = 500*time.Millisecond, 100*time.Millisecond, 30*time.Second, 0.03
	sum, err := FindCapacity(context.Background(), co, capacityStep(o, Test{Title: "PING_MBULK", Args: []string{"PING"}}))
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Capacity
	t.Logf("capacity %.0f [%.0f, %.0f] in %d steps, %.1f s (true 1000)", c.RPS, c.Low, c.High, c.Steps, c.Seconds)
	if len(c.Curve) != c.Steps || c.Steps == 0 {
		t.Fatalf("%d steps, a curve of %d", c.Steps, len(c.Curve))
	}
	for _, cs := range c.Curve {
		if cs.Holds && cs.OfferedRPS > 1100 {
			t.Errorf("a step at %.0f/s held (achieved %.0f/s): the server serves 1000/s", cs.OfferedRPS, cs.AchievedRPS)
		}
	}
	if c.Found && (c.High > 1100 || sum.Config.Rate > c.RPS*1.0001 || sum.Histogram == nil) {
		t.Errorf("capacity %.0f [%.0f, %.0f], summary of rate %.0f: want at most 1100/s, a step held at or below it", c.RPS, c.Low, c.High, sum.Config.Rate)
	}
}
