package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"redline/internal/benchdata"
)

// A --workers run starts its load processes together with a ready
// barrier: each worker connects all its clients and reports ready; when
// every one has, the coordinator measures each one's clock and link
// (ClockProbes round trips, the best kept) and tells each to start after
// a delay, so that all start at one instant a short margin ahead,
// whatever their clocks say. A worker not ready by the deadline fails the
// run, naming it, and the others are stopped.

// Worker is the coordinator's handle on one load process, on this host or
// another (the cli implements it with a child process and with a remote
// session). Its methods are called from one goroutine at a time.
type Worker interface {
	// Ready returns once the worker has connected its clients and waits
	// for the start, or with why it cannot.
	Ready(ctx context.Context) error
	// Clock returns the worker's clock, read as soon as asked.
	Clock(ctx context.Context) (time.Time, error)
	// Start tells it to start measuring after d by its own clock.
	Start(ctx context.Context, d time.Duration) error
	// Result waits for its Summary: partial, with its error, after a
	// failure or Stop; nil when it reported nothing. Ticks are its
	// progress intervals when its spec asked for them.
	Result(ctx context.Context) (*benchdata.Summary, []WorkerTick, error)
	// Stop interrupts it: it stops loading the server, reports what it
	// measured and exits. It does not wait.
	Stop()
}

// WorkerSlot is a worker with its identity: its number from 1 and the
// host it runs on ("" for this one).
type WorkerSlot struct {
	N      int
	Host   string
	Share  WorkerShare
	Worker Worker
}

func (s WorkerSlot) name() string { return WorkerName(s.N, s.Host) }

// Barrier settings.
const (
	// ClockProbes is how many round trips measure each worker's clock.
	ClockProbes = 5
	// MinStartMargin is the least the common start is set ahead of the
	// moment the start is sent; twice the slowest round trip is added.
	MinStartMargin = 20 * time.Millisecond
	// StartMarginPerWorker is added to the margin for each worker.
	StartMarginPerWorker = time.Millisecond
	// StartLateWarn is how late a worker may start before a warning.
	StartLateWarn = 5 * time.Millisecond
	// StopWait bounds the wait for a stopped worker's last report.
	StopWait = 30 * time.Second
)

// WorkerReadyTimeout is how long a --workers run waits, by default, for
// every worker to be ready: a connect's --timeout and room to start a
// process (or a session's bench) and set up its clients.
func WorkerReadyTimeout(o Options) time.Duration { return o.Timeout + 20*time.Second }

// WorkerResultTimeout is how long, by default, a --workers run waits for
// every worker's result after the start: for a timed run (-n 0 with
// --duration) its warm-up, duration, drain and a reply's --timeout and a
// margin; 0 (no deadline) for a run of -n requests, whose length is not
// known ahead.
func WorkerResultTimeout(o Options) time.Duration {
	if o.Requests > 0 || o.Duration <= 0 {
		return 0
	}
	return o.Warmup + o.Duration + o.Drain + o.Timeout + 10*time.Second
}

// WorkersOptions configure RunWorkers.
type WorkersOptions struct {
	// ReadyTimeout bounds the wait for every worker to be ready.
	ReadyTimeout time.Duration
	// ResultTimeout, when set, bounds the wait for the results after the
	// start (WorkerResultTimeout): then every worker is stopped, and one
	// that sends nothing within StopWait is named.
	ResultTimeout time.Duration
	// StopWait, when set, replaces StopWait (tests).
	StopWait time.Duration
	// Progress, when set, is called after the run with each merged
	// progress interval of the workers, in order (their specs must ask
	// for ticks: WorkerSpecs with ticks): the per-second series of a
	// lab's run.
	Progress func(Progress)
	// Warn, when set, is given a line for each worker that started later
	// than StartLateWarn after the common start.
	Warn func(string)
}

// RunWorkers runs one test in the workers with a common start and merges
// their results (MergeWorkers). It returns the merged Summary (nil when
// no worker reported) and an error naming each worker that failed.
func RunWorkers(ctx context.Context, ws []WorkerSlot, o WorkersOptions) (*benchdata.Summary, error) {
	if err := readyAll(ctx, ws, o.ReadyTimeout); err != nil {
		stopAll(ws)
		m, _ := MergeWorkers(results(stopped(), ws, nil, cmp.Or(o.StopWait, StopWait)))
		return m, err
	}
	clocks, err := startAll(ctx, ws, o.Warn)
	if err != nil {
		stopAll(ws)
		m, _ := MergeWorkers(results(stopped(), ws, clocks, cmp.Or(o.StopWait, StopWait)))
		return m, err
	}
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if o.ResultTimeout > 0 {
		wctx, cancel = context.WithTimeoutCause(ctx, o.ResultTimeout, errResultDeadline)
	}
	defer cancel()
	// Ctrl-C or the deadline: each reports what it measured.
	stop := context.AfterFunc(wctx, func() { stopAll(ws) })
	defer stop()
	parts := results(wctx, ws, clocks, cmp.Or(o.StopWait, StopWait))
	if ctx.Err() == nil && context.Cause(wctx) == errResultDeadline {
		for i, p := range parts {
			if p.Summary == nil {
				parts[i].Err = fmt.Errorf("sent no result within %s of the start (stopped then; a stalled host or process): %w", o.ResultTimeout, cmp.Or(p.Err, errors.New("no result")))
			}
		}
	}
	m, merr := MergeWorkers(parts)
	ticks := make([][]WorkerTick, len(parts))
	for i, p := range parts {
		ticks[i] = p.Ticks
	}
	replayTicks(ticks, o.Progress)
	var errs []error
	for _, p := range parts {
		if p.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.name(), p.Err))
		}
	}
	if merr != nil && m == nil && len(errs) == 0 {
		errs = append(errs, merr)
	}
	if m != nil && m.Interrupted && ctx.Err() != nil {
		return m, ErrInterrupted
	}
	return m, errors.Join(errs...)
}

var errResultDeadline = errors.New("the workers' result deadline passed")

// readyAll waits until every worker is ready, or fails naming the first
// that could not be and, at the deadline, every one not ready yet.
func readyAll(ctx context.Context, ws []WorkerSlot, timeout time.Duration) error {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type outcome struct {
		i   int
		err error
	}
	done := make(chan outcome, len(ws))
	for i, w := range ws {
		go func() { done <- outcome{i, w.Worker.Ready(rctx)} }()
	}
	ready := make([]bool, len(ws))
	for range ws {
		var o outcome
		select {
		case o = <-done:
		case <-rctx.Done():
			return notReady(ctx, ws, ready, timeout)
		}
		if o.err != nil {
			if rctx.Err() != nil {
				return notReady(ctx, ws, ready, timeout)
			}
			return fmt.Errorf("%s could not get ready: %w", ws[o.i].name(), o.err)
		}
		ready[o.i] = true
	}
	return nil
}

func notReady(ctx context.Context, ws []WorkerSlot, ready []bool, timeout time.Duration) error {
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted while the workers connected: %w", ctx.Err())
	}
	var names []string
	for i, w := range ws {
		if !ready[i] {
			names = append(names, w.name())
		}
	}
	return fmt.Errorf("%s not ready within %s (its clients had not all connected: a slow or unreachable server from there, or a slow host; see --workers-ready-timeout)",
		joinNames(names), timeout)
}

func joinNames(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return fmt.Sprintf("%s and %s", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}

// startAll measures each worker's clock and link, then tells each to
// start at one common instant.
func startAll(ctx context.Context, ws []WorkerSlot, warn func(string)) ([]*benchdata.WorkerClock, error) {
	clocks := make([]*benchdata.WorkerClock, len(ws))
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			clocks[i], errs[i] = probeClock(pctx, w.Worker)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s: measure its clock: %w", w.name(), errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return clocks, sendStarts(ctx, ws, clocks, warn)
}

// sendStarts tells every worker at once to start at one instant, a
// margin ahead: twice the slowest round trip, MinStartMargin and
// StartMarginPerWorker for each (the sends compete for this host's CPU
// and links). Each worker's start is recorded as late (LateMS) when its
// message arrived, by its round trip, after the instant; past
// StartLateWarn, warn names it.
func sendStarts(ctx context.Context, ws []WorkerSlot, clocks []*benchdata.WorkerClock, warn func(string)) error {
	var maxRTT float64
	for _, c := range clocks {
		maxRTT = max(maxRTT, c.RTTMS)
	}
	margin := MinStartMargin + time.Duration(len(ws))*StartMarginPerWorker + time.Duration(2*maxRTT*float64(time.Millisecond))
	at := time.Now().Add(margin)
	errs := make([]error, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Go(func() {
			// The start message arrives about half a round trip after it is sent.
			oneWay := time.Duration(clocks[i].RTTMS / 2 * float64(time.Millisecond))
			sent := time.Now()
			d := max(at.Sub(sent)-oneWay, 0)
			clocks[i].StartDelayMS = millis(d)
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := w.Worker.Start(sctx, d); err != nil {
				errs[i] = fmt.Errorf("%s: start: %w", w.name(), err)
				return
			}
			// The message arrived a one-way trip after it was sent, or,
			// when Start waited for a reply, about half way through.
			arrived := later(sent.Add(oneWay), sent.Add(time.Since(sent)/2))
			if late := arrived.Add(d).Sub(at); late > time.Millisecond {
				clocks[i].LateMS = millis(late)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, w := range ws {
		if late := clocks[i].LateMS; late > millis(StartLateWarn) && warn != nil {
			warn(fmt.Sprintf("%s started %.0f ms after the common start (its start message arrived late; the margin was %s): its first %.0f ms are missing from the merged interval's start",
				w.name(), late, margin.Round(time.Millisecond), late))
		}
	}
	return nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// probeClock keeps the round trip of ClockProbes with the least delay:
// the worker read its clock at about its middle.
func probeClock(ctx context.Context, w Worker) (*benchdata.WorkerClock, error) {
	var best *benchdata.WorkerClock
	for range ClockProbes {
		t0 := time.Now()
		theirs, err := w.Clock(ctx)
		rtt := time.Since(t0)
		if err != nil {
			return nil, err
		}
		off := theirs.Sub(t0.Add(rtt / 2))
		c := &benchdata.WorkerClock{OffsetMS: millis(off), RTTMS: millis(rtt)}
		if best == nil || c.RTTMS < best.RTTMS {
			best = c
		}
	}
	return best, nil
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func stopAll(ws []WorkerSlot) {
	for _, w := range ws {
		w.Worker.Stop()
	}
}

// results collects every worker's result: a worker runs as long as its
// share of the test does, and once ctx ends (Ctrl-C, or a stop, with ctx
// already done) it has stopWait to report.
func results(ctx context.Context, ws []WorkerSlot, clocks []*benchdata.WorkerClock, stopWait time.Duration) []WorkerPart {
	rctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		defer cancel()
		select {
		case <-ctx.Done():
		case <-finished:
			return
		}
		t := time.NewTimer(stopWait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-finished:
		}
	}()
	parts := make([]WorkerPart, len(ws))
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Go(func() {
			sum, ticks, err := w.Worker.Result(rctx)
			parts[i] = WorkerPart{Worker: w.N, Host: w.Host, Share: w.Share, Summary: sum, Ticks: ticks, Err: err}
			if clocks != nil {
				parts[i].Clock = clocks[i]
			}
		})
	}
	wg.Wait()
	return parts
}

// stopped is a context that has ended: results after a stop.
func stopped() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// WorkerTick is one progress interval of a worker (Options.Progress), kept
// for the merged per-interval series: every worker ticks from the common
// start, so tick i of each covers the same interval.
type WorkerTick struct {
	Warmup    bool                 `json:"warmup,omitempty"`
	Elapsed   time.Duration        `json:"elapsed"`
	Requests  int64                `json:"requests"`
	RPS       float64              `json:"rps"`
	Histogram *benchdata.Histogram `json:"histogram,omitempty"`
}

// TickRecorder collects a worker's ticks (its Options.Progress).
type TickRecorder struct {
	mu    sync.Mutex
	ticks []WorkerTick
}

// Record is an Options.Progress.
func (r *TickRecorder) Record(p Progress) {
	if p.Final {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ticks = append(r.ticks, WorkerTick{Warmup: p.Warmup, Elapsed: p.Elapsed, Requests: p.IntervalRequests, RPS: p.IntervalRPS, Histogram: p.Interval})
}

// Ticks returns what was recorded.
func (r *TickRecorder) Ticks() []WorkerTick {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ticks)
}

// replayTicks merges the workers' tick i into one Progress each, in
// order: requests and rates summed, latency from the merged histograms
// (exact over the interval's replies), and calls progress with them. A
// tick that some worker did not reach (its share ended sooner) merges
// the others'.
func replayTicks(parts [][]WorkerTick, progress func(Progress)) {
	if progress == nil {
		return
	}
	var total int64
	for i := 0; ; i++ {
		var p Progress
		h := benchdata.NewHistogram(tickPrecision)
		n := 0
		for _, ticks := range parts {
			if i >= len(ticks) {
				continue
			}
			t := ticks[i]
			n++
			p.Warmup = p.Warmup || t.Warmup
			p.Elapsed = max(p.Elapsed, t.Elapsed)
			p.IntervalRequests += t.Requests
			p.IntervalRPS += t.RPS
			if t.Histogram != nil {
				h.Merge(t.Histogram.Histogram)
			}
		}
		if n == 0 {
			return
		}
		total += p.IntervalRequests
		p.Requests, p.Interval = total, h
		p.IntervalAvg, p.IntervalP99, p.IntervalMax = h.Mean()/1e6, float64(h.ValueAtPercentile(99))/1e6, float64(h.Max())/1e6
		progress(p)
	}
}
