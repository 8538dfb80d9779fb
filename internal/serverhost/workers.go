package serverhost

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"redline/internal/bench"
	"redline/internal/benchdata"
	"redline/internal/remote"
)

// A session runs one share of a `bench --workers ssh:HOST,...` run as a
// worker of the ready barrier (bench.RunWorkers): bench.prepare starts
// the load generator, which connects its clients and waits; its reply
// comes once they are connected (or with why they could not be). The
// client reads the session's clock (bench.clock), then bench.start gives
// the delay to start after; bench.result waits for the Summary. The
// session stops the load when asked (bench.stop) and, by itself, when the
// session ends for any reason: a lost link stops the worker within the
// heartbeat timeout. The same operations run the local workers of
// `bench --workers N`: sessions of this binary started over pipes
// (remote.LocalWorker, ServeWorker). This file is the session host's
// side; sessionWorker (workers_client.go) is the client's.

// BenchPrepareArgs is one worker's share. The password travels here,
// never on a command line. ID, chosen by the client, names the worker
// from the request on, so that bench.stop reaches it before it is ready
// (the session chooses one when it is empty).
type BenchPrepareArgs struct {
	ID   string           `json:"id,omitempty"`
	Spec bench.WorkerSpec `json:"spec"`
}

// BenchRef names a prepared worker.
type BenchRef struct {
	ID string `json:"id"`
}

// MaxBenchStartDelay bounds how far ahead a start may be set: a worker
// waiting for it holds its connections to the server.
const MaxBenchStartDelay = 30 * time.Second

// BenchStartArgs starts a prepared worker's measurement after Delay, by
// the session host's clock (at most MaxBenchStartDelay).
type BenchStartArgs struct {
	ID    string        `json:"id"`
	Delay time.Duration `json:"delay"`
}

// BenchClock is the session host's clock as the request was read.
type BenchClock struct {
	Time time.Time `json:"time"`
}

// BenchResult is a worker's Summary (partial after an error or a stop)
// and its error.
type BenchResult struct {
	Summary *benchdata.Summary `json:"summary,omitempty"`
	Ticks   []bench.WorkerTick `json:"ticks,omitempty"`
	Error   string             `json:"error,omitempty"`
}

// benchRun is one worker running on this host.
type benchRun struct {
	cancel context.CancelFunc
	ready  chan struct{}
	start  chan time.Duration
	done   chan struct{}
	sum    *benchdata.Summary
	ticks  []bench.WorkerTick
	err    error
}

// benchWorkers are a session's bench workers, by ID: the in-process
// implementation of the bench.* operations.
type benchWorkers struct {
	// version stamps each Summary's client info.
	version string
	// local: the session is a local worker of the redline that started it
	// (ServeWorker): its workers may use a unix socket and network
	// namespaces (its client is a redline of this host with the same
	// rights).
	local bool

	mu   sync.Mutex
	runs map[string]*benchRun
	next int
}

// add registers r under id, or under a new ID when id is empty.
func (b *benchWorkers) add(id string, r *benchRun) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.runs == nil {
		b.runs = map[string]*benchRun{}
	}
	if id == "" {
		b.next++
		id = fmt.Sprintf("bench-%d", b.next)
	}
	if len(id) > 64 {
		return "", fmt.Errorf("bench ID %.64q... is longer than 64 bytes", id)
	}
	if b.runs[id] != nil {
		return "", fmt.Errorf("bench %q is running already in this session", id)
	}
	b.runs[id] = r
	return id, nil
}

func (b *benchWorkers) get(id string) (*benchRun, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.runs[id]
	if r == nil {
		return nil, fmt.Errorf("no bench %q in this session", id)
	}
	return r, nil
}

func (b *benchWorkers) forget(id string) {
	b.mu.Lock()
	delete(b.runs, id)
	b.mu.Unlock()
}

// checkWorkerSpec refuses what a remote client must not make a session
// do: enter namespaces, or reach anything but a TCP address. A local
// worker session may do both: its client is the redline that started it,
// on this host, with the same rights.
func checkWorkerSpec(sp *bench.WorkerSpec, local bool) error {
	o := &sp.Options
	if local {
		return o.Validate()
	}
	switch {
	case o.Network != "tcp":
		return fmt.Errorf("a remote worker connects over tcp only, not %q", o.Network)
	case o.NetNS != "" || o.ServerNetNS != "":
		return errors.New("a remote worker does not enter network namespaces")
	}
	if _, _, err := net.SplitHostPort(o.Addr); err != nil {
		return fmt.Errorf("server address %q: %w", o.Addr, err)
	}
	for _, b := range workerBounds(sp) {
		if b.over {
			return fmt.Errorf("a remote worker's %s is beyond what a session runs (%s)", b.what, b.limit)
		}
	}
	return o.Validate()
}

// workerBounds are the limits a session holds a client's worker spec to,
// so a client cannot make the server host open a million connections,
// buffer gigabytes or load for a week.
func workerBounds(sp *bench.WorkerSpec) []struct {
	over        bool
	what, limit string
} {
	o := &sp.Options
	return []struct {
		over        bool
		what, limit string
	}{
		{o.Clients > 50000, "clients (-c)", "50000"},
		{o.Threads > 1024, "threads", "1024"},
		{o.Pipeline > 100000, "pipeline (-P)", "100000"},
		{o.MaxPending > 1<<20, "max pending", "1048576"},
		{o.Duration+o.Warmup+o.Drain > 24*time.Hour, "duration, warm-up and drain", "24h"},
		{len(sp.Data) > 64<<20, "data", "64 MiB"},
		{o.Sizes.Largest() > 64<<20, "value size (-d)", "64 MiB"},
		// Each tick keeps an interval histogram until the result: a
		// nanosecond interval filled the server host's memory in seconds.
		{sp.Ticks && o.ProgressInterval < 100*time.Millisecond, "progress interval with ticks", "100ms or more"},
	}
}

// async starts bench.prepare or bench.result; remote.ErrUnknownOp for
// any other operation.
func (b *benchWorkers) async(ctx context.Context, op string, raw json.RawMessage) (func() (any, error), error) {
	switch op {
	case OpBenchPrepare:
		var a BenchPrepareArgs
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		if err := checkWorkerSpec(&a.Spec, b.local); err != nil {
			return nil, err
		}
		return b.prepare(ctx, a)
	case OpBenchResult:
		var a BenchRef
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		return b.result(a.ID)
	}
	return nil, remote.ErrUnknownOp
}

// do answers bench.clock, bench.start and bench.stop; remote.ErrUnknownOp
// for any other operation.
func (b *benchWorkers) do(op string, raw json.RawMessage) (any, error) {
	switch op {
	case OpBenchClock:
		if err := remote.DecodeArgs(raw, &struct{}{}); err != nil {
			return nil, err
		}
		return BenchClock{Time: time.Now()}, nil
	case OpBenchStart:
		var a BenchStartArgs
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		return struct{}{}, b.start(a)
	case OpBenchStop:
		var a BenchRef
		if err := remote.DecodeArgs(raw, &a); err != nil {
			return nil, err
		}
		r, err := b.get(a.ID)
		if err != nil {
			return nil, err
		}
		r.cancel()
		return struct{}{}, nil
	}
	return nil, remote.ErrUnknownOp
}

// prepare starts a worker; wait returns once it is ready.
func (b *benchWorkers) prepare(ctx context.Context, a BenchPrepareArgs) (func() (any, error), error) {
	rctx, cancel := context.WithCancel(ctx)
	r := &benchRun{cancel: cancel, ready: make(chan struct{}), start: make(chan time.Duration, 1), done: make(chan struct{})}
	id, err := b.add(a.ID, r)
	if err != nil {
		cancel()
		return nil, err
	}
	ready := func(ctx context.Context) error {
		close(r.ready)
		return bench.AwaitStart(ctx, r.start)
	}
	go func() {
		defer close(r.done)
		defer cancel()
		r.sum, r.ticks, r.err = bench.RunWorker(rctx, a.Spec, ready)
		if r.sum != nil {
			r.sum.Client = benchdata.LocalClientInfo(b.version)
		}
	}()
	return func() (any, error) {
		select {
		case <-r.ready:
			return BenchRef{ID: id}, nil
		case <-r.done:
		}
		select {
		case <-r.ready: // ready, then ended at once: the client gets its ID and result
			return BenchRef{ID: id}, nil
		default: // never ready: nobody will ask for it by ID
			b.forget(id)
			return nil, r.err
		}
	}, nil
}

func (b *benchWorkers) start(a BenchStartArgs) error {
	r, err := b.get(a.ID)
	if err != nil {
		return err
	}
	if a.Delay > MaxBenchStartDelay {
		return fmt.Errorf("bench %s: a start %s away is more than %s: a coordinator sets the start a few round trips ahead", a.ID, a.Delay, MaxBenchStartDelay)
	}
	select {
	case r.start <- max(a.Delay, 0):
		return nil
	default:
		return fmt.Errorf("bench %s was started already", a.ID)
	}
}

// result waits for a worker's end and forgets it.
func (b *benchWorkers) result(id string) (func() (any, error), error) {
	r, err := b.get(id)
	if err != nil {
		return nil, err
	}
	return func() (any, error) {
		<-r.done
		b.forget(id)
		res := BenchResult{Summary: r.sum, Ticks: r.ticks}
		if r.err != nil {
			res.Error = r.err.Error()
		}
		return res, nil
	}, nil
}

// end stops every worker still running (the session's context is gone by
// now) and waits for each to end, up to ctx; c counts them.
func (b *benchWorkers) end(ctx context.Context, c *remote.Cleanup) {
	b.mu.Lock()
	runs := b.runs
	b.runs = nil
	b.mu.Unlock()
	for _, id := range sortedKeys(runs) {
		r := runs[id]
		r.cancel()
		select {
		case <-r.done:
			c.Benches++
		case <-ctx.Done():
			c.Errors = append(c.Errors, fmt.Sprintf("bench %s did not stop: %v", id, ctx.Err()))
		}
	}
}
