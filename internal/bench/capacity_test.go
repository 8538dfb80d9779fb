package bench

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"redline/internal/benchdata"
)

// simServer is a simulated server for the search: at rate λ its
// percentile of interest is base/(1-λ/mu), times lognormal noise of
// spread sigma from step to step; above mu it cannot keep up.
type simServer struct {
	mu, base, sigma float64 // requests/s, ms, log-sd
	rng             *rand.Rand
	clock           time.Time
	steps           int
}

// capacity is the rate at which the median step meets target ms.
func (s *simServer) capacity(target float64) float64 { return s.mu * (1 - s.base/target) }

func (s *simServer) now() time.Time { return s.clock }

func (s *simServer) step(_ context.Context, rate float64, warmup, dur time.Duration) (*benchdata.Summary, error) {
	s.steps++
	s.clock = s.clock.Add(warmup + dur + 50*time.Millisecond)
	if rate == 0 { // the closed-loop probe: about mu
		return simSummary(s.mu*0.97, s.base*20, dur, 0), nil
	}
	lat := 1e9
	achieved := min(rate, s.mu)
	if rate < s.mu {
		lat = s.base / (1 - rate/s.mu) * math.Exp(s.sigma*s.rng.NormFloat64())
	}
	return simSummary(rate, lat, dur, int64((rate-achieved)*dur.Seconds())), nil
}

// simSummary is a step's Summary whose every percentile is lat ms.
func simSummary(rate, lat float64, dur time.Duration, backlog int64) *benchdata.Summary {
	h := benchdata.NewHistogram(3)
	h.RecordValues(int64(lat*1e6), 100)
	n := int64(rate * dur.Seconds())
	return &benchdata.Summary{Requests: n, RPS: rate, Histogram: h, Latency: benchdata.Digest(h.Histogram),
		Config: benchdata.RunConfig{Rate: rate, DurationSec: dur.Seconds()},
		Drain:  &benchdata.Drain{LateAtEnd: backlog}}
}

func simOptions(s *simServer, target time.Duration) CapacityOptions {
	o := DefaultCapacityOptions([]SLO{{Name: "p99", Percentile: 99, Target: target}})
	o.now = s.now
	return o
}

// TestCapacityFindsSimulatedEdge: on a quiet simulated server the
// search ends inside its budget with an interval that holds the true
// capacity and is as narrow as asked.
func TestCapacityFindsSimulatedEdge(t *testing.T) {
	s := &simServer{mu: 100000, base: 0.1, sigma: 0.03, rng: rand.New(rand.NewPCG(1, 2)), clock: time.Unix(0, 0)}
	sum, err := FindCapacity(context.Background(), simOptions(s, time.Millisecond), s.step)
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Capacity
	want := s.capacity(1)
	if !c.Found || c.Low > want || c.High < want {
		t.Fatalf("capacity %.0f [%.0f, %.0f], want the interval to hold %.0f (found %v)", c.RPS, c.Low, c.High, want, c.Found)
	}
	if c.Exhausted || c.High/c.Low > 1.0401 {
		t.Errorf("interval [%.0f, %.0f] not within ±2%% (exhausted %v) after %d steps", c.Low, c.High, c.Exhausted, c.Steps)
	}
	if c.Steps != len(c.Curve) || c.ProbeRPS == 0 || sum.Config.Rate > c.RPS*1.0001 {
		t.Errorf("steps %d curve %d probe %.0f; the summary's rate %.0f is above the capacity", c.Steps, len(c.Curve), c.ProbeRPS, sum.Config.Rate)
	}
	t.Logf("capacity %.0f [%.0f, %.0f] (true %.0f), %d steps", c.RPS, c.Low, c.High, want, c.Steps)
}

// TestCapacityCoverage checks the stated error rate: the 95% interval
// holds the true capacity in at least 87% of searches (nominal 95%; the
// bound leaves room for 120 trials' sampling error, sd 2%), on
// simulated servers from a sharp edge to noisy steps whose noise is
// not the logistic the model assumes.
func TestCapacityCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("360 simulated searches")
	}
	for _, sigma := range []float64{0.01, 0.1, 0.3} {
		covered, trials, steps := 0, 120, 0
		rng := rand.New(rand.NewPCG(7, uint64(sigma*1000)))
		for range trials {
			mu := 20000 * math.Exp(3*rng.Float64())
			s := &simServer{mu: mu, base: 0.05 + 0.4*rng.Float64(), sigma: sigma, rng: rng, clock: time.Unix(0, 0)}
			sum, err := FindCapacity(context.Background(), simOptions(s, time.Millisecond), s.step)
			if err != nil {
				t.Fatal(err)
			}
			c, want := sum.Capacity, s.capacity(1)
			if c.Low <= want && want <= c.High {
				covered++
			}
			steps += c.Steps
		}
		rate := float64(covered) / float64(trials)
		t.Logf("sigma %.2f: coverage %.3f, %.1f steps a search", sigma, rate, float64(steps)/float64(trials))
		if rate < 0.87 {
			t.Errorf("sigma %.2f: the 95%% interval held the capacity in %.1f%% of %d searches", sigma, 100*rate, trials)
		}
	}
}

// TestCapacityNeverHolds: a target below the server's floor latency is
// met at no rate: the search says so instead of inventing a capacity.
func TestCapacityNeverHolds(t *testing.T) {
	s := &simServer{mu: 50000, base: 2, sigma: 0.02, rng: rand.New(rand.NewPCG(3, 4)), clock: time.Unix(0, 0)}
	sum, err := FindCapacity(context.Background(), simOptions(s, time.Millisecond), s.step)
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Capacity
	if c.Found || c.RPS != 0 || !strings.Contains(c.Note, "held at no rate") {
		t.Fatalf("found %v, %.0f, note %q; want not found", c.Found, c.RPS, c.Note)
	}
	if c.Seconds > 61 {
		t.Errorf("took %.0f s of a 60 s budget", c.Seconds)
	}
}

// TestCapacityBudget: a budget of a few steps ends the search with what
// it has, marked exhausted.
func TestCapacityBudget(t *testing.T) {
	s := &simServer{mu: 80000, base: 0.1, sigma: 0.2, rng: rand.New(rand.NewPCG(5, 6)), clock: time.Unix(0, 0)}
	o := simOptions(s, time.Millisecond)
	o.Budget = 5 * time.Second
	sum, err := FindCapacity(context.Background(), o, s.step)
	if err != nil {
		t.Fatal(err)
	}
	if c := sum.Capacity; !c.Exhausted || c.Seconds > 5 || !strings.Contains(c.Note, "budget") {
		t.Fatalf("exhausted %v after %.1f s, note %q", c.Exhausted, c.Seconds, c.Note)
	}
}

// TestCapacityJudge: each reason a step fails is named.
func TestCapacityJudge(t *testing.T) {
	o := DefaultCapacityOptions([]SLO{{Name: "p99", Percentile: 99, Target: time.Millisecond}, {Name: "p50", Percentile: 50, Target: 100 * time.Microsecond}})
	cases := []struct {
		sum   *benchdata.Summary
		err   error
		holds bool
		why   string
	}{
		{simSummary(1000, 0.05, time.Second, 0), nil, true, ""},
		{simSummary(1000, 0.5, time.Second, 0), nil, false, "p50 0.5002ms > 0.1ms"},
		{simSummary(1000, 0.05, time.Second, 100), nil, false, "achieved 90% of offered"},
		{func() *benchdata.Summary { s := simSummary(1000, 0.05, time.Second, 0); s.Errors = 5; return s }(), nil, false, "errors 0.498%"},
		{nil, errors.New("connection refused"), false, "connection refused"},
	}
	for i, c := range cases {
		cs := judge(o, 1000, c.sum, c.err)
		if cs.Holds != c.holds || !strings.Contains(cs.Why, c.why) {
			t.Errorf("case %d: holds %v why %q; want %v %q", i, cs.Holds, cs.Why, c.holds, c.why)
		}
	}
}

func TestParseSLOs(t *testing.T) {
	got, err := ParseSLOs([]string{"p99=1ms,p99.9=5ms", "P50=200us"})
	if err != nil || len(got) != 3 || got[1].Percentile != 99.9 || got[2].Target != 200*time.Microsecond || got[2].Name != "p50" {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range []string{"p99", "99=1ms", "p100=1ms", "p0=1ms", "p99=fast", "p99=-1ms", "pNaN=1ms"} {
		if _, err := ParseSLOs([]string{bad}); err == nil || !strings.Contains(err.Error(), "p99=1ms") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestCapacityStepFloor: a step must hold enough requests for its
// percentile (5 beyond it): the search never goes below that rate, and
// an answer against it is none.
func TestCapacityStepFloor(t *testing.T) {
	if n := minRequests([]SLO{{Percentile: 50}, {Percentile: 99.9}, {Percentile: 99}}); n != 5000 {
		t.Errorf("minRequests = %d, want 5000", n)
	}
	s := &simServer{mu: 50000, base: 0.9, sigma: 0.3, rng: rand.New(rand.NewPCG(9, 9)), clock: time.Unix(0, 0)}
	sum, err := FindCapacity(context.Background(), simOptions(s, time.Millisecond), s.step)
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range sum.Capacity.Curve {
		if cs.OfferedRPS < 500*0.999 {
			t.Errorf("a step at %.0f/s: below the 500/s a 1 s step needs for p99", cs.OfferedRPS)
		}
	}
}
