package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"redline/internal/benchdata"
	"redline/internal/redistest"
	"redline/internal/testutil/svcserver"
)

// The acceptance measurements of issue 37 (docs/benchmarks.md, "Capacity
// at a latency target"). They take minutes and print figures, they assert
// nothing: run them by hand with REDLINE_CAPACITY_ACCEPT=a,c,d (any of).

func acceptWanted(t *testing.T, part string) {
	t.Helper()
	v := os.Getenv("REDLINE_CAPACITY_ACCEPT")
	for _, p := range []byte(v) {
		if string(p) == part {
			return
		}
	}
	t.Skip("an acceptance measurement: REDLINE_CAPACITY_ACCEPT=" + part)
}

func acceptEnv(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return v
	}
	return def
}

// coBlindStep is a search's step judged as a CO-blind token bucket
// judges it (valkey-benchmark --rps): one request outstanding per
// connection, latency timed from the actual send, the wait for a free
// connection not counted.
func coBlindStep(o Options, t Test) StepFunc {
	o.MaxPending = 1
	inner := capacityStep(o, t)
	return func(ctx context.Context, rate float64, warmup, dur time.Duration) (*benchdata.Summary, error) {
		sum, err := inner(ctx, rate, warmup, dur)
		if sum != nil && sum.UncorrectedHistogram != nil {
			sum.Histogram = sum.UncorrectedHistogram
			sum.Latency = benchdata.Digest(sum.Histogram.Histogram)
			sum.Drain = nil // a token bucket does not see its backlog either
		}
		return sum, err
	}
}

// closedLoopSearch is PerfKitBenchmarker's latency-capped search
// (memtier.py): a binary search on the number of closed-loop clients
// (pipeline 1) for the highest throughput whose percentile stays within
// the target; each step one run of dur. It returns that throughput and
// the clients.
func closedLoopSearch(ctx context.Context, o Options, t Test, slo SLO, dur time.Duration, maxClients int) (float64, int, error) {
	best, bestN := 0.0, 0
	lo, hi := 1, maxClients
	for lo <= hi {
		mid := (lo + hi) / 2
		so := o
		so.Clients, so.Rate, so.Duration, so.Warmup, so.Requests = mid, 0, dur, dur/4, 0
		sum, err := Run(ctx, so, t, nil)
		if err != nil {
			return 0, 0, err
		}
		if percentileMS(sum, slo.Percentile) <= msOf(slo.Target) {
			if sum.RPS > best {
				best, bestN = sum.RPS, mid
			}
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	return best, bestN, nil
}

// validate runs the workload open loop at rate for dur and returns the
// percentile a real arrival stream sees there.
func validate(ctx context.Context, o Options, t Test, slo SLO, rate float64, dur time.Duration) float64 {
	sum, err := capacityStep(o, t)(ctx, rate, time.Second, dur)
	if sum == nil {
		return math.NaN()
	}
	_ = err
	return percentileMS(sum, slo.Percentile)
}

func spread(xs []float64) float64 {
	lo, hi := math.Inf(1), 0.0
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return hi / lo
}

// acceptSLO is the target percentile ACCEPT_PCT (default 99) at target.
func acceptSLO(target time.Duration) SLO {
	pct := acceptEnv("ACCEPT_PCT", 99)
	return SLO{Name: "p" + strconv.FormatFloat(pct, 'g', -1, 64), Percentile: pct, Target: target}
}

var pingTest = Test{Title: "PING_MBULK", Args: []string{"PING"}}

// TestCapacityAcceptConstructed is acceptance (a): a server of known
// capacity 1/D; five searches of at most 60 s.
func TestCapacityAcceptConstructed(t *testing.T) {
	acceptWanted(t, "a")
	d := time.Duration(acceptEnv("ACCEPT_D_US", 1000)) * time.Microsecond
	target := time.Duration(acceptEnv("ACCEPT_TARGET_MS", 50)) * time.Millisecond
	srv, err := svcserver.Start(svcserver.Options{Service: d})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	o := DefaultOptions()
	o.Addr, o.Clients = srv.Addr(), 20
	truth := float64(time.Second) / float64(d)
	var found []float64
	slo := acceptSLO(target)
	for i := range 5 {
		co := DefaultCapacityOptions([]SLO{slo})
		sum, err := FindCapacity(context.Background(), co, capacityStep(o, pingTest))
		if err != nil {
			t.Fatal(err)
		}
		c := sum.Capacity
		found = append(found, c.RPS)
		fmt.Printf("(a) search %d: capacity %.0f [%.0f, %.0f] = %.3f of 1/D=%.0f, %d steps, %.1f s\n", i+1, c.RPS, c.Low, c.High, c.RPS/truth, truth, c.Steps, c.Seconds)
	}
	fmt.Printf("(a) D=%v %s<=%v: five capacities %v, spread max/min %.3f\n", d, slo.Name, target, rounded(found), spread(found))
}

func rounded(xs []float64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(math.Round(x))
	}
	return out
}

// TestCapacityAcceptRepeatable is acceptance (c): five searches on one
// redis-server, beside five PKB-style closed-loop client bisections.
func TestCapacityAcceptRepeatable(t *testing.T) {
	acceptWanted(t, "c")
	s := redistest.Start(t)
	target := time.Duration(acceptEnv("ACCEPT_TARGET_MS", 1)*1000) * time.Microsecond
	slo := acceptSLO(target)
	o := DefaultOptions()
	o.Addr = s.Addr()
	get := Test{Title: "GET", Args: []string{"GET", "key:__rand_int__"}}
	o.Keys = KeyOptions{Dist: "uniform", Space: 10000}
	var ours, pkb []float64
	for i := range 5 {
		sum, err := FindCapacity(context.Background(), DefaultCapacityOptions([]SLO{slo}), capacityStep(o, get))
		if err != nil {
			t.Fatal(err)
		}
		c := sum.Capacity
		ours = append(ours, c.RPS)
		fmt.Printf("(c) search %d: capacity %.0f [%.0f, %.0f], %d steps, %.1f s\n", i+1, c.RPS, c.Low, c.High, c.Steps, c.Seconds)
		start := time.Now()
		rps, n, err := closedLoopSearch(context.Background(), o, get, slo, time.Second, 64)
		if err != nil {
			t.Fatal(err)
		}
		pkb = append(pkb, rps)
		fmt.Printf("(c) closed-loop bisection %d: %.0f requests/s at %d clients, %.1f s\n", i+1, rps, n, time.Since(start).Seconds())
	}
	fmt.Printf("(c) %s<=%v: redline %v spread %.3f; closed-loop bisection %v spread %.3f\n", slo.Name, target, rounded(ours), spread(ours), rounded(pkb), spread(pkb))
}

// TestCapacityAcceptStall is acceptance (d): a server that stalls every
// second; redline's capacity, a closed-loop search's and a CO-blind
// token bucket's, each checked by an open-loop run at the rate it claims.
func TestCapacityAcceptStall(t *testing.T) {
	acceptWanted(t, "d")
	d := time.Duration(acceptEnv("ACCEPT_D_US", 1000)) * time.Microsecond
	srv, err := svcserver.Start(svcserver.Options{Service: d, Period: time.Second, Stall: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	pct := acceptEnv("ACCEPT_PCT", 90)
	target := time.Duration(acceptEnv("ACCEPT_TARGET_MS", 20)) * time.Millisecond
	slo := SLO{Name: "p" + strconv.FormatFloat(pct, 'g', -1, 64), Percentile: pct, Target: target}
	o := DefaultOptions()
	o.Addr, o.Clients = srv.Addr(), 50
	ctx := context.Background()
	co := DefaultCapacityOptions([]SLO{slo})
	co.Step, co.StepWarmup = 2*time.Second, 500*time.Millisecond
	sum, err := FindCapacity(ctx, co, capacityStep(o, pingTest))
	if err != nil {
		t.Fatal(err)
	}
	ours := sum.Capacity.RPS
	blind, err := FindCapacity(ctx, co, coBlindStep(o, pingTest))
	if err != nil {
		t.Fatal(err)
	}
	closed, n, err := closedLoopSearch(ctx, o, pingTest, slo, 2*time.Second, 64)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		who  string
		rate float64
		note string
	}{{"redline (open loop, CO-corrected)", ours, sum.Capacity.Note}, {"CO-blind token bucket", blind.Capacity.RPS, blind.Capacity.Note},
		{fmt.Sprintf("closed-loop bisection (%d clients)", n), closed, "none held"}} {
		if r.rate <= 0 {
			fmt.Printf("(d) %s: none found (%s)\n", r.who, r.note)
			continue
		}
		fmt.Printf("(d) %s: %.0f requests/s; open loop at that rate for 10 s: %s %.2f ms (target %v)\n", r.who, r.rate, slo.Name, validate(ctx, o, pingTest, slo, r.rate, 10*time.Second), target)
	}
}
