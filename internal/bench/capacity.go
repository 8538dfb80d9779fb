package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"redline/internal/benchdata"
)

// A capacity search (bench --slo) answers "how much load does this server
// take while p99 stays under my target": it offers the workload open loop
// (latency from intended send times, no coordinated omission) at a
// sequence of rates, each a short step, and finds the highest rate at
// which every target holds and the achieved rate keeps up with the
// offered one.
//
// The search is Bayesian and adaptive, as QUEST (Watson and Pelli, 1983)
// finds a threshold: each step holds or fails; P(holds | rate) is modelled
// as a logistic curve in log rate whose midpoint, the capacity, and width
// are unknown (a grid of each, with a small lapse rate so that one stray
// step cannot decide), and the next step goes to the posterior median. So
// the steps gather near the edge and repeat there; the answer is the
// posterior median with an equal-tailed credible interval, and the search
// stops when the interval is as narrow as asked or the time budget is
// spent. The capacity is thus the rate at which one step of this length
// holds the targets half the time; the interval's low end is the careful
// number. TestCapacityCoverage checks the interval's coverage on
// simulated servers.

// Capacity search defaults.
const (
	DefaultStep         = time.Second
	DefaultBudget       = 60 * time.Second
	DefaultSLOPrecision = 0.02
	DefaultKeepUp       = 0.95
	DefaultLevel        = 0.95
	capacityLapse       = 0.04 // P(a step's outcome is unrelated to its rate)
	capacityGrid        = 1200 // capacity grid points over the range
	minHolding          = 2    // steps that held and failed before stopping
)

// placement is where the steps go, in turn, as quantiles of the
// capacity's posterior: at its median, as QUEST does, and on both sides,
// where the outcome tells a sharp edge from a wide one (steps at the
// median alone cannot, and a wide width keeps the interval wide).
var placement = []float64{0.5, 0.2, 0.8}

// capacityWidths are the logistic widths (in log rate) the model weighs:
// from a sharp edge (a deterministic server) to a wide one (noisy steps).
var capacityWidths = []float64{0.004, 0.01, 0.02, 0.04, 0.08, 0.16}

// SLO is one latency target: the Percentile at most Target.
type SLO struct {
	Name       string // "p99"
	Percentile float64
	Target     time.Duration
}

// ParseSLOs reads latency targets: "p99=1ms", several comma-separated
// ("p50=200us,p99.9=5ms") or given in several strings.
func ParseSLOs(specs []string) ([]SLO, error) {
	var out []SLO
	for _, spec := range specs {
		for _, one := range strings.Split(spec, ",") {
			s, err := parseSLO(strings.TrimSpace(one))
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
	}
	return out, nil
}

func parseSLO(s string) (SLO, error) {
	name, val, ok := strings.Cut(s, "=")
	bad := func(why string) (SLO, error) {
		return SLO{}, fmt.Errorf("--slo %q: %s (write a percentile and a latency, e.g. p99=1ms or p99.9=5ms)", s, why)
	}
	if !ok {
		return bad("no '='")
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if !strings.HasPrefix(name, "p") {
		return bad("the percentile must start with p")
	}
	p, err := strconv.ParseFloat(name[1:], 64)
	if err != nil || p <= 0 || p >= 100 || math.IsNaN(p) {
		return bad("the percentile must be a number above 0 and below 100")
	}
	d, err := time.ParseDuration(strings.TrimSpace(val))
	if err != nil || d <= 0 {
		return bad("the latency must be a positive duration such as 1ms or 500us")
	}
	return SLO{Name: name, Percentile: p, Target: d}, nil
}

// CapacityOptions configures a capacity search.
type CapacityOptions struct {
	SLOs []SLO
	// Step is the measured length of each step, StepWarmup the load
	// before it (not counted); Budget bounds the whole search.
	Step, StepWarmup, Budget time.Duration
	// Precision is the interval's relative half-width to reach (0.02:
	// high/low within 1.04); Level the interval's credibility.
	Precision, Level float64
	// KeepUp is the least achieved/offered a step needs, MaxErrors the
	// largest fraction of failed requests.
	KeepUp, MaxErrors float64
	// Low and High bound the rates searched; 0 takes them from a short
	// closed-loop probe (Low probe/1000, High 3x probe; High grows when
	// steps near it hold).
	Low, High float64
	// OnStep, when set, is called after each step.
	OnStep func(benchdata.CurveStep)
	// now is the clock (tests replace it).
	now func() time.Time
}

// Validate checks the options and says what to change.
func (o *CapacityOptions) Validate() error {
	switch {
	case len(o.SLOs) == 0:
		return errors.New("a capacity search needs a latency target (--slo p99=1ms)")
	case o.Step <= 0 || o.StepWarmup < 0:
		return errors.New("--slo-step must be positive and --slo-warmup not negative")
	case o.Budget < o.Step:
		return fmt.Errorf("--slo-budget %v is shorter than one step (%v)", o.Budget, o.Step)
	case o.Precision <= 0 || o.Precision >= 0.5:
		return fmt.Errorf("--slo-precision must be above 0 and below 0.5, got %v", o.Precision)
	case o.KeepUp <= 0 || o.KeepUp > 1:
		return fmt.Errorf("--slo-keep-up must be above 0 and at most 1, got %v", o.KeepUp)
	case o.MaxErrors < 0 || o.MaxErrors >= 1:
		return fmt.Errorf("--slo-errors must be at least 0 and below 1, got %v", o.MaxErrors)
	case o.Low < 0 || o.High < 0 || (o.High > 0 && o.Low >= o.High) || o.High > MaxRate:
		return fmt.Errorf("--slo-range must be LOW:HIGH with 0 < LOW < HIGH <= %g", float64(MaxRate))
	}
	return nil
}

// DefaultCapacityOptions returns the defaults with the given targets.
func DefaultCapacityOptions(slos []SLO) CapacityOptions {
	return CapacityOptions{SLOs: slos, Step: DefaultStep, StepWarmup: DefaultStep / 4, Budget: DefaultBudget,
		Precision: DefaultSLOPrecision, Level: DefaultLevel, KeepUp: DefaultKeepUp}
}

// StepFunc measures one step: the workload at rate requests/s in total,
// open loop, for warmup then dur; rate 0 is the closed-loop probe.
type StepFunc func(ctx context.Context, rate float64, warmup, dur time.Duration) (*benchdata.Summary, error)

// FindCapacity runs a capacity search with step and returns the
// Summary of the step that describes the answer, with the search in its
// Capacity field. The error is set when the search could not run (the
// probe failed, or steps failed three times in a row) or was stopped; the
// Summary then holds what was measured, when anything was.
func FindCapacity(ctx context.Context, o CapacityOptions, step StepFunc) (*benchdata.Summary, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.now == nil {
		o.now = time.Now
	}
	s := &search{o: o, step: step, start: o.now(), sums: map[int]*benchdata.Summary{}}
	s.c = &benchdata.Capacity{Level: o.Level, Precision: o.Precision, KeepUp: o.KeepUp, MaxErrors: o.MaxErrors,
		StepSeconds: o.Step.Seconds(), BudgetSeconds: o.Budget.Seconds(), Curve: []benchdata.CurveStep{}}
	for _, t := range o.SLOs {
		s.c.Targets = append(s.c.Targets, benchdata.SLOTarget{Name: t.Name, Percentile: t.Percentile, TargetMS: msOf(t.Target)})
	}
	err := s.run(ctx)
	return s.answer(), err
}

// search is one capacity search's state.
type search struct {
	o      CapacityOptions
	step   StepFunc
	start  time.Time
	c      *benchdata.Capacity
	sums   map[int]*benchdata.Summary // by curve index
	probe  *benchdata.Summary
	lo, hi float64 // log rates
	floor  float64 // the lowest log rate a step can measure the targets at
	post   *model
	last   time.Duration // the last step's wall time
}

func (s *search) run(ctx context.Context) error {
	if err := s.setRange(ctx); err != nil {
		return err
	}
	next := math.Log(s.o.High)
	if s.c.ProbeRPS > 0 {
		next = math.Log(s.c.ProbeRPS / 2)
	}
	failedInARow := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.o.now().Sub(s.start)+s.last > s.o.Budget {
			s.c.Exhausted = !s.narrow()
			return nil
		}
		t0 := s.o.now()
		cs, err := s.measure(ctx, math.Exp(next))
		s.last = s.o.now().Sub(t0)
		if err != nil && ctx.Err() != nil {
			return err
		}
		if err != nil {
			if failedInARow++; failedInARow == 3 {
				return fmt.Errorf("three steps in a row failed, the last at %.0f requests/s: %w", cs.OfferedRPS, err)
			}
		} else {
			failedInARow = 0
		}
		s.update(cs)
		if s.done() {
			return nil
		}
		next = s.post.quantile(placement[len(s.c.Curve)%len(placement)])
	}
}

// setRange sets the search's log-rate range, from the options or from a
// short closed-loop probe.
func (s *search) setRange(ctx context.Context) error {
	lo, hi := s.o.Low, s.o.High
	if hi == 0 {
		sum, err := s.step(ctx, 0, s.o.StepWarmup, s.o.Step)
		if err != nil {
			return fmt.Errorf("the closed-loop probe that sets the search's range failed: %w", err)
		}
		if sum == nil || sum.RPS <= 0 {
			return errors.New("the closed-loop probe that sets the search's range measured no throughput")
		}
		s.probe, s.c.ProbeRPS = sum, sum.RPS
		hi = min(3*sum.RPS, MaxRate)
		if lo == 0 {
			lo = max(sum.RPS/1000, 1)
		}
	}
	if lo == 0 {
		lo = max(hi/1000, 1)
	}
	s.floor = math.Log(max(float64(minRequests(s.o.SLOs))/s.o.Step.Seconds(), 1))
	if hi <= math.Exp(s.floor) {
		return fmt.Errorf("steps of %v cannot measure %s below %.0f requests/s (%d requests a step); the range ends at %.0f: lengthen --slo-step", s.o.Step, highest(s.o.SLOs), math.Exp(s.floor), minRequests(s.o.SLOs), hi)
	}
	s.lo, s.hi = max(math.Log(lo), s.floor), math.Log(hi)
	return nil
}

// highest names the highest target percentile.
func highest(slos []SLO) string {
	best := slos[0]
	for _, t := range slos {
		if t.Percentile > best.Percentile {
			best = t
		}
	}
	return best.Name
}

// minRequests is the fewest requests a step needs for its highest target
// percentile to rest on at least 5 requests beyond it: 500 for p99, 5000
// for p99.9. Fewer, and a step's "p99" is its slowest request or two.
func minRequests(slos []SLO) int {
	n := 0
	for _, t := range slos {
		n = max(n, int(math.Ceil(5/(1-t.Percentile/100)-1e-9)))
	}
	return n
}

// update adds a step to the model; when a step near the range's top
// held, the capacity may lie above it: the top rises and the model
// starts again from every step.
func (s *search) update(cs benchdata.CurveStep) {
	if cs.Holds && math.Log(cs.OfferedRPS) > s.hi-math.Log(1.1) && s.hi < math.Log(MaxRate) {
		s.hi = min(s.hi+math.Log(4), math.Log(MaxRate))
		s.post = nil
	}
	if s.post == nil {
		s.post = newModel(s.lo, s.hi, s.c.Curve)
	} else {
		s.post.add(cs)
		s.post.normalise()
	}
	// The posterior piled against the range's floor is the flat prior's
	// edge, not a narrow answer: the floor goes down (to 1/s at most).
	for s.lo > s.floor && s.post.quantile((1-s.o.Level)/2) < s.lo+math.Log(1.05) {
		s.lo = max(s.lo-math.Log(4), s.floor)
		s.post = newModel(s.lo, s.hi, s.c.Curve)
	}
}

// narrow reports whether the interval is as narrow as asked.
func (s *search) narrow() bool {
	if s.post == nil {
		return false
	}
	lo, hi := s.interval()
	return hi-lo <= math.Log((1+s.o.Precision)/(1-s.o.Precision))
}

func (s *search) interval() (float64, float64) {
	a := (1 - s.o.Level) / 2
	return s.post.quantile(a), s.post.quantile(1 - a)
}

// done reports whether the search can stop: the interval is narrow, and
// both sides of the edge were seen often enough; or the targets failed
// at the range's floor twice (they do not hold at any rate searched).
func (s *search) done() bool {
	held, failed, floorFails := 0, 0, 0
	for _, cs := range s.c.Curve {
		if cs.Holds {
			held++
		} else {
			failed++
			if math.Log(cs.OfferedRPS) <= s.lo+math.Log(1.05) {
				floorFails++
			}
		}
	}
	if floorFails >= 2 && held == 0 {
		return true
	}
	return held >= minHolding && failed >= minHolding && s.narrow()
}

// measure runs one step at rate and judges it.
func (s *search) measure(ctx context.Context, rate float64) (benchdata.CurveStep, error) {
	sum, err := s.step(ctx, rate, s.o.StepWarmup, s.o.Step)
	cs := judge(s.o, rate, sum, err)
	cs.Seq = len(s.c.Curve) + 1
	if sum != nil {
		s.sums[len(s.c.Curve)] = sum
	}
	s.c.Curve = append(s.c.Curve, cs)
	if s.o.OnStep != nil {
		s.o.OnStep(cs)
	}
	return cs, err
}

// judge turns one step's Summary into a point of the curve: the targets
// hold when every percentile is within its target, the achieved rate
// keeps up, and errors stay within the bound.
func judge(o CapacityOptions, rate float64, sum *benchdata.Summary, err error) benchdata.CurveStep {
	cs := benchdata.CurveStep{OfferedRPS: rate}
	if sum == nil {
		cs.Why = fmt.Sprint(err)
		return cs
	}
	cs.Requests, cs.Errors, cs.Latency, cs.Histogram = sum.Requests, sum.Errors, sum.Latency, sum.Histogram
	if d := sum.Drain; d != nil {
		cs.Backlog = d.LateAtEnd + d.OutstandingAtEnd
	}
	if dur := sum.Config.DurationSec; dur > 0 {
		cs.AchievedRPS = float64(max(cs.Requests-cs.Backlog, 0)) / dur
	} else {
		cs.AchievedRPS = sum.RPS
	}
	var why []string
	for _, t := range o.SLOs {
		v := percentileMS(sum, t.Percentile)
		cs.Percentiles = append(cs.Percentiles, v)
		if v > msOf(t.Target) {
			why = append(why, fmt.Sprintf("%s %sms > %sms", t.Name, fmtMS(v), fmtMS(msOf(t.Target))))
		}
	}
	if cs.AchievedRPS < o.KeepUp*rate {
		why = append(why, fmt.Sprintf("achieved %.0f%% of offered", 100*cs.AchievedRPS/rate))
	}
	if total := cs.Requests + cs.Errors; total > 0 && float64(cs.Errors)/float64(total) > o.MaxErrors {
		why = append(why, fmt.Sprintf("errors %.3g%%", 100*float64(cs.Errors)/float64(total)))
	}
	if err != nil {
		why = append(why, err.Error())
	}
	cs.Holds, cs.Why = len(why) == 0, strings.Join(why, "; ")
	return cs
}

// percentileMS reads a percentile from the step's histogram, with the
// digest's rule (highest equivalent value).
func percentileMS(sum *benchdata.Summary, p float64) float64 {
	if sum.Histogram == nil || sum.Histogram.Histogram == nil || sum.Histogram.TotalCount() == 0 {
		return math.Inf(1)
	}
	return float64(sum.Histogram.ValueAtPercentile(p)) / 1e6
}

func msOf(d time.Duration) float64 { return float64(d) / 1e6 }

func fmtMS(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// answer fills in the result and picks the Summary that describes it.
func (s *search) answer() *benchdata.Summary {
	c := s.c
	c.Steps, c.Seconds = len(c.Curve), s.o.now().Sub(s.start).Seconds()
	held := -1
	if s.post != nil {
		lo, hi := s.interval()
		c.RPS, c.Low, c.High = math.Exp(s.post.quantile(0.5)), math.Exp(lo), math.Exp(hi)
		for i, cs := range c.Curve {
			if cs.Holds && cs.OfferedRPS <= c.RPS*1.0001 && (held < 0 || cs.OfferedRPS > c.Curve[held].OfferedRPS) {
				held = i
			}
		}
	}
	anyHeld := false
	for _, cs := range c.Curve {
		anyHeld = anyHeld || cs.Holds
	}
	// An interval against the lowest rate a step can measure is no answer.
	c.Found = anyHeld && s.post != nil && c.Low > math.Exp(s.floor)*1.05
	if !c.Found {
		c.RPS, c.Low, c.High = 0, 0, 0
		if len(c.Curve) > 0 {
			c.Note = fmt.Sprintf("the targets held at no rate measured (the lowest: %.0f requests/s; steps of %v measure %s from %.0f/s up)", lowest(c.Curve), s.o.Step, highest(s.o.SLOs), math.Exp(s.floor))
		}
	} else if c.Exhausted {
		c.Note = fmt.Sprintf("the time budget ended the search before the interval was within ±%g%%", 100*c.Precision)
	}
	sum := s.pick(held)
	if sum == nil {
		return nil
	}
	out := *sum
	out.Capacity = c
	return &out
}

// pick returns the Summary of curve step i, else of the lowest step
// measured, else the probe's.
func (s *search) pick(i int) *benchdata.Summary {
	if sum := s.sums[i]; sum != nil {
		return sum
	}
	idx := make([]int, 0, len(s.sums))
	for k := range s.sums {
		idx = append(idx, k)
	}
	sort.Slice(idx, func(a, b int) bool { return s.c.Curve[idx[a]].OfferedRPS < s.c.Curve[idx[b]].OfferedRPS })
	if len(idx) > 0 {
		return s.sums[idx[0]]
	}
	return s.probe
}

func lowest(curve []benchdata.CurveStep) float64 {
	lo := math.Inf(1)
	for _, cs := range curve {
		lo = min(lo, cs.OfferedRPS)
	}
	return lo
}
