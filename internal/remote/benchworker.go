package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"redline/internal/bench"
	"redline/internal/benchdata"
)

// BenchWorker is one share of a bench --workers run, run by a session on
// its host (a bench.Worker for bench.RunWorkers).
type BenchWorker struct {
	c    *Client
	host string
	spec bench.WorkerSpec
	mu   sync.Mutex
	id   string // set once the session has it ready
}

// NewBenchWorker makes a worker of spec on c's host (named host in
// messages). The session is this redline (hello checked the version), so
// it runs the load generator.
func NewBenchWorker(c *Client, host string, spec bench.WorkerSpec) (*BenchWorker, error) {
	return &BenchWorker{c: c, host: host, spec: spec}, nil
}

// Ready implements bench.Worker: the session starts the load generator
// and answers once its clients are connected.
func (w *BenchWorker) Ready(ctx context.Context) error {
	var ref BenchRef
	if err := w.call(ctx, OpBenchPrepare, BenchPrepareArgs{Spec: w.spec}, &ref); err != nil {
		return err
	}
	w.mu.Lock()
	w.id = ref.ID
	w.mu.Unlock()
	return nil
}

// Clock implements bench.Worker.
func (w *BenchWorker) Clock(ctx context.Context) (time.Time, error) {
	var c BenchClock
	err := w.call(ctx, OpBenchClock, struct{}{}, &c)
	return c.Time, err
}

// Start implements bench.Worker.
func (w *BenchWorker) Start(ctx context.Context, d time.Duration) error {
	return w.call(ctx, OpBenchStart, BenchStartArgs{ID: w.ref(), Delay: d}, nil)
}

// Result implements bench.Worker.
func (w *BenchWorker) Result(ctx context.Context) (*benchdata.Summary, []bench.WorkerTick, error) {
	id := w.ref()
	if id == "" {
		return nil, nil, errors.New("never ready; its session stops it when this redline hangs up")
	}
	var r BenchResult
	if err := w.call(ctx, OpBenchResult, BenchRef{ID: id}, &r); err != nil {
		return nil, nil, err
	}
	if r.Error != "" {
		return r.Summary, r.Ticks, errors.New(r.Error)
	}
	return r.Summary, r.Ticks, nil
}

// Stop implements bench.Worker: it asks the session to stop the worker,
// without waiting. A worker not ready yet is stopped when the session
// ends (its client hangs up).
func (w *BenchWorker) Stop() {
	if id := w.ref(); id != "" {
		w.c.send(OpBenchStop, BenchRef{ID: id}, false)
	}
}

func (w *BenchWorker) ref() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.id
}

// call runs one operation; when the link has died it says so, and what
// the host does about it.
func (w *BenchWorker) call(ctx context.Context, op string, args, result any) error {
	err := w.c.Call(ctx, op, args, result)
	if err == nil {
		return nil
	}
	select {
	case <-w.c.Done():
		return fmt.Errorf("%w: the link to %s was lost; its session stops the worker by itself within %s", err, w.host, w.c.Hello.HeartbeatTimeout)
	default:
		return err
	}
}
