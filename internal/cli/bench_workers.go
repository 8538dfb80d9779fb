package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"redline/internal/bench"
	"redline/internal/benchdata"
)

// bench --workers N runs each test in N processes of this binary
// (`redline bench --worker`, hidden), each given its share of -c, -n and
// --rate on stdin (as JSON: the password never reaches a command line).
// Each connects its clients, says it is ready and waits to be told when
// to start (bench.RunWorkers: the ready barrier), then answers with its
// Summary. The Summaries are merged exactly (bench.MergeWorkers).
//
// The child's stdin carries the spec, then workerCtl lines; its stdout
// carries workerMsg lines: ready, clock readings, and the Summary last.

// workerSpec is what a worker is told: the same for a child process and
// for a remote session's bench.
type workerSpec = bench.WorkerSpec

// workerCtl is one instruction to a waiting worker process.
type workerCtl struct {
	Op    string        `json:"op"` // "clock", "start" or "stop"
	Delay time.Duration `json:"delay,omitempty"`
}

// workerMsg is one line from a worker process.
type workerMsg struct {
	Ready   bool               `json:"ready,omitempty"`
	Clock   time.Time          `json:"clock,omitzero"`
	Summary *benchdata.Summary `json:"summary,omitempty"`
	Ticks   []bench.WorkerTick `json:"ticks,omitempty"`
}

// checkWorkers refuses what a worker cannot do (n workers, on ssh
// hosts when remote).
func checkWorkers(n int, o bench.Options, idle, remote bool) error {
	switch {
	case n < 0:
		return fmt.Errorf("--workers must not be negative, got %d", n)
	case n <= 1 && !remote:
		return nil
	case idle:
		return fmt.Errorf("--workers with -I is not supported")
	}
	return bench.CheckWorkers(n, o)
}

// runWorkers runs t in n local processes and merges their results.
func runWorkers(ctx context.Context, o bench.Options, t bench.Test, data []byte, n int, wo bench.WorkersOptions) (*benchdata.Summary, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--workers: find this program: %w", err)
	}
	specs := bench.WorkerSpecs(o, t, data, n, wo.Progress != nil)
	ws := make([]bench.WorkerSlot, n)
	for i, spec := range specs {
		p, err := startWorker(exe, spec)
		if err != nil {
			stopStarted(ws[:i])
			return nil, fmt.Errorf("%s: %w", bench.WorkerName(i+1, ""), err)
		}
		ws[i] = bench.WorkerSlot{N: i + 1, Share: bench.ShareOf(spec), Worker: p}
	}
	return bench.RunWorkers(ctx, ws, wo)
}

// stopStarted stops the workers started before one failed to start, and
// reaps them (killed if they do not exit within bench.StopWait).
func stopStarted(ws []bench.WorkerSlot) {
	ctx, cancel := context.WithTimeout(context.Background(), bench.StopWait)
	defer cancel()
	for _, w := range ws {
		w.Worker.Stop()
	}
	for _, w := range ws {
		w.Worker.Result(ctx)
	}
}

// workerProc is a local worker process (bench.Worker).
type workerProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr bytes.Buffer
	inMu   sync.Mutex

	ready   chan struct{}
	clock   chan time.Time
	exited  chan struct{} // closed once its output ended and it was reaped
	summary *benchdata.Summary
	ticks   []bench.WorkerTick
	err     error // its exit, in its own words
}

func startWorker(exe string, spec workerSpec) (*workerProc, error) {
	in, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("encode the worker's settings: %w", err)
	}
	p := &workerProc{ready: make(chan struct{}), clock: make(chan time.Time, 1), exited: make(chan struct{})}
	p.cmd = exec.Command(exe, "bench", "--worker")
	p.cmd.Stderr = &p.stderr
	// A parent killed outright (kill -9, the OOM killer) closes their
	// stdin, which stops them; SIGKILL is the backstop (nobody is left to
	// read a partial result). Not SIGINT: a worker of a coordinator
	// started with SIGINT ignored inherits that.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	go p.read(out)
	if err := p.send(append(in, '\n')); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// read takes the worker's lines until its output ends, then reaps it.
func (p *workerProc) read(out io.Reader) {
	dec := json.NewDecoder(out)
	var readErr error
	for {
		var m workerMsg
		if err := dec.Decode(&m); err != nil {
			if err != io.EOF {
				readErr = fmt.Errorf("unreadable output: %w", err)
				io.Copy(io.Discard, out)
			}
			break
		}
		switch {
		case m.Summary != nil:
			p.summary, p.ticks = m.Summary, m.Ticks
		case m.Ready:
			close(p.ready)
		case !m.Clock.IsZero():
			select {
			case p.clock <- m.Clock:
			default:
			}
		}
	}
	werr := p.cmd.Wait()
	switch msg := strings.TrimSpace(p.stderr.String()); {
	case werr != nil && msg != "":
		p.err = errors.New(msg)
	case werr != nil:
		p.err = werr
	case readErr != nil:
		p.err = readErr
	case p.summary == nil:
		p.err = errors.New("no result")
	}
	close(p.exited)
}

func (p *workerProc) send(line []byte) error {
	p.inMu.Lock()
	defer p.inMu.Unlock()
	if _, err := p.stdin.Write(line); err != nil {
		return fmt.Errorf("write to the worker: %w", err)
	}
	return nil
}

func (p *workerProc) ctl(c workerCtl) error {
	b, _ := json.Marshal(c)
	return p.send(append(b, '\n'))
}

// Ready implements bench.Worker.
func (p *workerProc) Ready(ctx context.Context) error {
	select {
	case <-p.ready:
		return nil
	case <-p.exited:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Clock implements bench.Worker.
func (p *workerProc) Clock(ctx context.Context) (time.Time, error) {
	if err := p.ctl(workerCtl{Op: "clock"}); err != nil {
		return time.Time{}, err
	}
	select {
	case t := <-p.clock:
		return t, nil
	case <-p.exited:
		return time.Time{}, p.err
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}

// Start implements bench.Worker.
func (p *workerProc) Start(_ context.Context, d time.Duration) error {
	return p.ctl(workerCtl{Op: "start", Delay: d})
}

// Result implements bench.Worker: when ctx ends first, the worker is
// killed, so that nothing is left running.
func (p *workerProc) Result(ctx context.Context) (*benchdata.Summary, []bench.WorkerTick, error) {
	select {
	case <-p.exited:
		return p.summary, p.ticks, p.err
	case <-ctx.Done():
		p.cmd.Process.Kill()
		<-p.exited
		return p.summary, p.ticks, fmt.Errorf("no report within %s of the stop: killed", bench.StopWait)
	}
}

// Stop implements bench.Worker: a "stop" line and the end of its input,
// not a signal (it may have inherited SIGINT ignored), so the worker
// reports what it measured, before or after its start.
func (p *workerProc) Stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.ctl(workerCtl{Op: "stop"})
	p.inMu.Lock()
	p.stdin.Close()
	p.inMu.Unlock()
}

// runWorkerChild is `redline bench --worker`: one share of a --workers
// run, its settings and instructions on stdin, its readiness, clock and
// Summary on stdout, its error on stderr. It stops, reporting what it
// measured, on a "stop" line or the end of its stdin, whenever they come
// (before or after the start): a coordinator started with SIGINT ignored
// (`cmd &` in a script) passes that on to its workers, so a signal cannot
// be what stops them.
func runWorkerChild(ctx context.Context, s *streams) error {
	dec := json.NewDecoder(s.in)
	var spec workerSpec
	if err := dec.Decode(&spec); err != nil {
		return exitCode(ExitFailure, fmt.Sprintf("--worker: bad settings: %v", err))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var encMu sync.Mutex
	enc := json.NewEncoder(s.out)
	send := func(m workerMsg) error {
		encMu.Lock()
		defer encMu.Unlock()
		return enc.Encode(m)
	}
	start := readWorkerCtls(dec, cancel, func() error { return send(workerMsg{Clock: time.Now()}) })
	ready := func(ctx context.Context) error {
		if err := send(workerMsg{Ready: true}); err != nil {
			return err
		}
		return bench.AwaitStart(ctx, start)
	}
	sum, ticks, err := bench.RunWorker(ctx, spec, ready)
	if sum != nil {
		sum.Client = benchdata.LocalClientInfo(Version())
		if jerr := send(workerMsg{Summary: sum, Ticks: ticks}); jerr != nil && err == nil {
			err = jerr
		}
	}
	if err != nil {
		return exitCode(ExitFailure, err.Error())
	}
	return nil
}

// errWorkerStopped and errCoordinatorGone are why a worker's run was
// cancelled: a "stop" line, or its stdin ended.
var (
	errWorkerStopped   = errors.New("stopped by the coordinating redline")
	errCoordinatorGone = errors.New("the coordinating redline went away")
)

// readWorkerCtls reads control lines until stdin ends: "stop" and the end
// cancel the run, "clock" is answered with clock, and the delay of the
// first "start" is passed on (the channel closes at the end of stdin).
func readWorkerCtls(dec *json.Decoder, cancel context.CancelCauseFunc, clock func() error) <-chan time.Duration {
	start := make(chan time.Duration, 1)
	go func() {
		defer close(start)
		started := false
		for {
			var c workerCtl
			if dec.Decode(&c) != nil {
				cancel(errCoordinatorGone)
				return
			}
			switch {
			case c.Op == "stop":
				cancel(errWorkerStopped)
			case c.Op == "clock":
				if err := clock(); err != nil {
					cancel(err)
				}
			case c.Op == "start" && !started:
				started = true
				start <- c.Delay
			}
		}
	}()
	return start
}
