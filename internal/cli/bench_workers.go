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
	"syscall"
	"time"

	"redline/internal/bench"
	"redline/internal/benchdata"
)

// bench --workers N runs each test in N processes of this binary
// (`redline bench --worker`, hidden), each given its share of -c, -n and
// --rate and a common start time on stdin (as JSON: the password never
// reaches a command line), each answering with its Summary on stdout.
// The Summaries are merged exactly (bench.MergeWorkers).

// workerSpec is what a worker process is told.
type workerSpec struct {
	Options bench.Options `json:"options"`
	Test    bench.Test    `json:"test"`
	Data    []byte        `json:"data"`
}

// checkWorkers refuses what a worker process cannot do.
func checkWorkers(n int, o bench.Options, idle bool) error {
	switch {
	case n < 0:
		return fmt.Errorf("--workers must not be negative, got %d", n)
	case n <= 1:
		return nil
	case o.TLS != nil:
		return fmt.Errorf("--workers with --tls is not supported yet")
	case idle:
		return fmt.Errorf("--workers with -I is not supported")
	case o.Clients < n:
		return fmt.Errorf("--workers %d needs at least one client each: -c %d", n, o.Clients)
	case o.Requests > 0 && o.Requests < int64(n):
		return fmt.Errorf("--workers %d needs at least one request each: -n %d", n, o.Requests)
	}
	return nil
}

// runWorkers runs t in n processes and merges their results.
func runWorkers(ctx context.Context, o bench.Options, t bench.Test, data []byte, n int) (*benchdata.Summary, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--workers: find this program: %w", err)
	}
	o.Progress, o.ProgressFinal = nil, false
	o.StartAt = time.Now().Add(bench.WorkerStartDelay)
	clients, reqs := bench.Shares(int64(o.Clients), n), bench.Shares(o.Requests, n)
	procs := make([]*workerProc, n)
	for i := range procs {
		wo := o
		wo.Clients, wo.Requests, wo.Rate = int(clients[i]), reqs[i], o.Rate/float64(n)
		wo.Seed = o.Seed + uint64(i) // different keys in each process
		p, err := startWorker(ctx, exe, workerSpec{Options: wo, Test: t, Data: data})
		if err != nil {
			for _, q := range procs[:i] {
				q.cmd.Process.Kill()
				q.cmd.Wait()
			}
			return nil, err
		}
		procs[i] = p
	}
	var parts []*benchdata.Summary
	var errs []error
	for i, p := range procs {
		sum, err := p.wait()
		if err != nil {
			errs = append(errs, fmt.Errorf("worker %d: %w", i+1, err))
		}
		if sum != nil {
			parts = append(parts, sum)
		}
	}
	if len(parts) == 0 {
		return nil, errors.Join(errs...)
	}
	m, err := bench.MergeWorkers(parts)
	if err != nil {
		return nil, err
	}
	if m.Interrupted && len(errs) > 0 && ctx.Err() != nil {
		return m, bench.ErrInterrupted
	}
	return m, errors.Join(errs...)
}

type workerProc struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
}

func startWorker(ctx context.Context, exe string, spec workerSpec) (*workerProc, error) {
	in, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("--workers: encode the worker's settings: %w", err)
	}
	p := &workerProc{}
	p.cmd = exec.CommandContext(ctx, exe, "bench", "--worker")
	p.cmd.Stdin = bytes.NewReader(in)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	// Ctrl-C reaches a worker as SIGINT, so it reports what it measured.
	p.cmd.Cancel = func() error { return p.cmd.Process.Signal(os.Interrupt) }
	p.cmd.WaitDelay = 10 * time.Second
	// A parent killed outright (kill -9, the OOM killer) stops its
	// workers the same way, instead of leaving them loading the server.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGINT}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("--workers: start %s: %w", exe, err)
	}
	return p, nil
}

// wait returns the worker's Summary (partial after an error) and its
// error, in its own words.
func (p *workerProc) wait() (*benchdata.Summary, error) {
	werr := p.cmd.Wait()
	var sum *benchdata.Summary
	if p.stdout.Len() > 0 {
		sum = &benchdata.Summary{}
		if err := json.Unmarshal(p.stdout.Bytes(), sum); err != nil {
			return nil, fmt.Errorf("unreadable result: %w", err)
		}
	}
	if werr != nil {
		msg := strings.TrimSpace(p.stderr.String())
		if msg == "" {
			msg = werr.Error()
		}
		return sum, errors.New(msg)
	}
	if sum == nil {
		return nil, errors.New("no result")
	}
	return sum, nil
}

// runWorkerChild is `redline bench --worker`: one share of a --workers
// run, its settings on stdin, its Summary on stdout, its error on stderr.
func runWorkerChild(ctx context.Context, s *streams) error {
	b, err := io.ReadAll(s.in)
	if err != nil {
		return exitCode(ExitFailure, fmt.Sprintf("--worker: read the settings: %v", err))
	}
	var spec workerSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		return exitCode(ExitFailure, fmt.Sprintf("--worker: bad settings: %v", err))
	}
	sum, err := bench.Run(ctx, spec.Options, spec.Test, spec.Data)
	if sum != nil {
		sum.Client = benchdata.LocalClientInfo(Version())
		if jerr := json.NewEncoder(s.out).Encode(sum); jerr != nil && err == nil {
			err = jerr
		}
	}
	if err != nil {
		return exitCode(ExitFailure, err.Error())
	}
	return nil
}
