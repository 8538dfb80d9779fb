package serverhost

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"redline/internal/bench"
	"redline/internal/benchdata"
	"redline/internal/remote"
)

// sessionWorker is one share of a bench --workers run, run by a session
// (a bench.Worker for bench.RunWorkers): on a worker host (Remote), or on
// this one (a remote.LocalWorker session).
type sessionWorker struct {
	c    *remote.Client
	host string // "" for a local worker session
	spec bench.WorkerSpec
	id   string // its name in the session, chosen here

	mu      sync.Mutex
	sent    bool // its bench.prepare was sent
	ready   bool // and answered: its clients are connected
	stopped bool // Stop was called
}

// benchIDs numbers the workers this redline makes.
var benchIDs atomic.Uint64

// NewBenchWorker makes a worker of spec on c's session; host names it in
// messages ("" for a local worker session). The session is this redline
// (hello checked the version), so it runs the load generator.
func NewBenchWorker(c *remote.Client, host string, spec bench.WorkerSpec) (bench.Worker, error) {
	return &sessionWorker{c: c, host: host, spec: spec, id: fmt.Sprintf("w%d", benchIDs.Add(1))}, nil
}

// Ready implements bench.Worker: the session starts the load generator
// and answers once its clients are connected. The request is sent under
// the lock Stop takes, so a Stop comes after it on the link and stops
// it, ready or not.
func (w *sessionWorker) Ready(ctx context.Context) error {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return errors.New("stopped before it was prepared")
	}
	p, err := w.c.Send(OpBenchPrepare, BenchPrepareArgs{ID: w.id, Spec: w.spec})
	w.sent = err == nil
	w.mu.Unlock()
	if err == nil {
		err = p.Wait(ctx, nil)
	}
	if err != nil {
		return w.linkErr(err)
	}
	w.mu.Lock()
	w.ready = true
	w.mu.Unlock()
	return nil
}

// Clock implements bench.Worker.
func (w *sessionWorker) Clock(ctx context.Context) (time.Time, error) {
	var c BenchClock
	err := w.call(ctx, OpBenchClock, struct{}{}, &c)
	return c.Time, err
}

// Start implements bench.Worker.
func (w *sessionWorker) Start(ctx context.Context, d time.Duration) error {
	return w.call(ctx, OpBenchStart, BenchStartArgs{ID: w.id, Delay: d}, nil)
}

// Result implements bench.Worker.
func (w *sessionWorker) Result(ctx context.Context) (*benchdata.Summary, []bench.WorkerTick, error) {
	w.mu.Lock()
	ready := w.ready
	w.mu.Unlock()
	if !ready {
		return nil, nil, errors.New("never ready (stopped)")
	}
	var r BenchResult
	if err := w.call(ctx, OpBenchResult, BenchRef{ID: w.id}, &r); err != nil {
		return nil, nil, err
	}
	if r.Error != "" {
		return r.Summary, r.Ticks, errors.New(r.Error)
	}
	return r.Summary, r.Ticks, nil
}

// Stop implements bench.Worker: it asks the session to stop the worker,
// ready or still connecting, without waiting.
func (w *sessionWorker) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.sent {
		w.c.Notify(OpBenchStop, BenchRef{ID: w.id})
	}
}

// call runs one operation; when the link has died it says so.
func (w *sessionWorker) call(ctx context.Context, op string, args, result any) error {
	if err := w.c.Call(ctx, op, args, result); err != nil {
		return w.linkErr(err)
	}
	return nil
}

// linkErr adds to a call's error, when the link has died, what the
// worker's host does about it.
func (w *sessionWorker) linkErr(err error) error {
	select {
	case <-w.c.Done():
	default:
		return err
	}
	if w.host == "" { // its own process: the error says how it ended
		return err
	}
	return fmt.Errorf("%w: the link to %s was lost; its session stops the worker by itself within %s", err, w.host, w.c.Hello.HeartbeatTimeout)
}
