package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"redline/internal/bench"
	"redline/internal/benchdata"
)

// capacityFlags are bench's capacity search (--slo): docs/bench.md,
// "Capacity at a latency target".
type capacityFlags struct {
	slo                  []string
	budget, step, warmup time.Duration
	precision, keepUp    float64
	maxErrors            float64
	rangeSpec            string
}

func (c *capacityFlags) define(fl *pflag.FlagSet) {
	fl.StringArrayVar(&c.slo, "slo", nil, "find the capacity at a latency target: the highest open-loop rate at which PERCENTILE=LATENCY holds, e.g. p99=1ms (several: p99=1ms,p99.9=5ms)")
	fl.DurationVar(&c.budget, "slo-budget", bench.DefaultBudget, "with --slo: time budget of the whole search")
	fl.DurationVar(&c.step, "slo-step", bench.DefaultStep, "with --slo: measured length of each step")
	fl.DurationVar(&c.warmup, "slo-warmup", bench.DefaultStep/4, "with --slo: load before each step's measurement")
	fl.Float64Var(&c.precision, "slo-precision", bench.DefaultSLOPrecision, "with --slo: stop when the 95% interval is within ± this fraction")
	fl.Float64Var(&c.keepUp, "slo-keep-up", bench.DefaultKeepUp, "with --slo: a step holds only when achieved >= this fraction of offered")
	fl.Float64Var(&c.maxErrors, "slo-errors", 0, "with --slo: a step holds only when at most this fraction of requests failed (with --reconnect)")
	fl.StringVar(&c.rangeSpec, "slo-range", "", "with --slo: search rates LOW:HIGH requests/s (default: from a short closed-loop probe)")
}

func (c *capacityFlags) active() bool { return len(c.slo) > 0 }

// options checks the flags against the run's and returns the search's.
func (c *capacityFlags) options(f *flagsView, o bench.Options) (bench.CapacityOptions, error) {
	slos, err := bench.ParseSLOs(c.slo)
	if err != nil {
		return bench.CapacityOptions{}, err
	}
	co := bench.DefaultCapacityOptions(slos)
	co.Budget, co.Step, co.StepWarmup = c.budget, c.step, c.warmup
	co.Precision, co.KeepUp, co.MaxErrors = c.precision, c.keepUp, c.maxErrors
	if c.rangeSpec != "" {
		lo, hi, ok := strings.Cut(c.rangeSpec, ":")
		l, err1 := strconv.ParseFloat(lo, 64)
		h, err2 := strconv.ParseFloat(hi, 64)
		if !ok || err1 != nil || err2 != nil || l <= 0 || h <= l {
			return co, fmt.Errorf("--slo-range %q: give LOW:HIGH requests/s, e.g. 1000:200000", c.rangeSpec)
		}
		co.Low, co.High = l, h
	}
	checks := []struct {
		bad bool
		msg string
	}{
		{o.Rate > 0, "--slo searches the rate itself: leave --rate out"},
		{o.ConnectRate > 0, "--slo with --connect-rate is not supported (the search offers requests on kept connections)"},
		{!o.KeepAlive, "--slo with -k 0 is not supported"},
		{o.TLS != nil, "--slo with --tls is not supported yet: the open loop (--rate) does not run over TLS yet"},
		{f.loop, "--slo with -l is not supported: run the search again"},
		{f.duration, "--slo measures steps of --slo-step (after --slo-warmup): leave --duration and --warmup out"},
	}
	for _, ch := range checks {
		if ch.bad {
			return co, errors.New(ch.msg)
		}
	}
	return co, co.Validate()
}

// flagsView is what options needs of the bench flags.
type flagsView struct{ loop, duration bool }

// capacity runs a capacity search for each test: the steps go through
// the run's own measure (here, or in its --workers), each a copy of the
// options with the step's rate and length.
func (r *benchRun) capacity(ctx context.Context, tests []bench.Test, co bench.CapacityOptions) error {
	r.started = time.Now()
	if r.f.CSV {
		io.WriteString(r.s.out, bench.CurveCSVHeader)
	}
	data := bench.NewPayload().Next(r.o.Sizes.Largest())
	for _, t := range tests {
		if ctx.Err() != nil {
			return exitCode(ExitSignaled, fmt.Sprintf("redline bench: stopped by %s before %s, with %d searches done", stoppedWhat(ctx), t.Title, len(r.results)))
		}
		if err := r.searchOne(ctx, t, data, co); err != nil {
			return err
		}
	}
	return nil
}

func (r *benchRun) searchOne(ctx context.Context, t bench.Test, data []byte, co bench.CapacityOptions) error {
	if r.progress.mode != "none" {
		co.OnStep = func(cs benchdata.CurveStep) { r.showStep(t.Title, cs) }
	}
	step := func(ctx context.Context, rate float64, warmup, dur time.Duration) (*benchdata.Summary, error) {
		o := r.o
		o.Rate, o.Duration, o.Warmup, o.Requests = rate, dur, warmup, 0
		// A step beyond capacity leaves a backlog: draining it longer
		// than half a step tells nothing more and spends the budget.
		o.Drain = min(o.Drain, max(dur/2, 100*time.Millisecond))
		o.Progress = nil
		return r.measureWith(ctx, o, t, data)
	}
	sum, err := bench.FindCapacity(ctx, co, step)
	if sum != nil {
		r.keep(sum, t)
		r.printCapacity(sum)
		if werr := r.save(sum); werr != nil {
			return exitCode(ExitFailure, fmt.Sprintf("redline bench: the results were not saved: %v", werr))
		}
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return exitCode(ExitSignaled, fmt.Sprintf("redline bench: %s stopped the capacity search of %s: %v", stoppedWhat(ctx), t.Title, err))
	case err != nil:
		return exitCode(ExitFailure, fmt.Sprintf("redline bench: capacity search of %s: %v", t.Title, err))
	case sum == nil || !sum.Capacity.Found:
		msg := "no step measured"
		if sum != nil {
			msg = sum.Capacity.Note
		}
		return exitCode(ExitFailure, fmt.Sprintf("redline bench: %s: no capacity at the target: %s", t.Title, msg))
	}
	return nil
}

// showStep logs one step on stderr.
func (r *benchRun) showStep(title string, cs benchdata.CurveStep) {
	verdict := "holds"
	if !cs.Holds {
		verdict = "fails: " + cs.Why
	}
	r.progress.mu.Lock()
	defer r.progress.mu.Unlock()
	fmt.Fprintf(r.s.err, "%s: step %d: offered %.0f/s, achieved %.0f/s, p50 %.3f p99 %.3f p99.9 %.3f ms: %s\n",
		title, cs.Seq, cs.OfferedRPS, cs.AchievedRPS, cs.Latency.P50, cs.Latency.P99, cs.Latency.P999, verdict)
}

// printCapacity writes the search's answer and curve on stdout.
func (r *benchRun) printCapacity(sum *benchdata.Summary) {
	switch {
	case r.f.CSV:
		bench.WriteCurveCSV(r.s.out, sum)
	case r.f.Quiet:
		fmt.Fprintf(r.s.out, "%s: %s\n", sum.Title, bench.CapacityLine(sum.Capacity))
	default:
		bench.WriteCapacity(r.s.out, sum)
	}
}
