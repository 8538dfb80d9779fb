package cli

import (
	"context"
	"fmt"
	"sync"

	"redline/internal/bench"
	"redline/internal/benchdata"
	"redline/internal/labdata"
)

// labLoad is the lab's load from workers (lab.Options.Workers): the
// scenario's client.workers local worker sessions, or one on each of its
// client.worker_hosts through ssh, opened at the first run and kept until
// the lab ends.
type labLoad struct {
	s    *streams
	f    *labFlags
	mu   sync.Mutex
	pool *workerPool
}

func (l *labLoad) run(ctx context.Context, o bench.Options, t bench.Test, data []byte, c labdata.ClientSpec) (*benchdata.Summary, error) {
	// The lab's per-second series comes from the workers' merged ticks.
	wo := bench.WorkersOptions{ReadyTimeout: bench.WorkerReadyTimeout(o), ResultTimeout: bench.WorkerResultTimeout(o), Progress: o.Progress,
		Warn: func(msg string) { fmt.Fprintln(l.s.err, "redline lab: warning: "+msg) }}
	if err := checkSSHWorkers(c.WorkerHosts, &sshWorkerFlags{}, o, true); err != nil {
		return nil, err
	}
	w, err := l.sessions(ctx, c)
	if err != nil {
		return nil, err
	}
	return w.run(ctx, o, t, data, wo)
}

// sessions opens the workers' sessions once.
func (l *labLoad) sessions(ctx context.Context, c labdata.ClientSpec) (*workerPool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pool != nil {
		return l.pool, nil
	}
	var err error
	if l.pool, err = workerSessions(ctx, l.s, c.WorkerHosts, c.Workers, &sshWorkerFlags{config: l.f.sshConfig, stateDir: l.f.stateDir}); err != nil {
		return nil, fmt.Errorf("the scenario's client workers: %w", err)
	}
	return l.pool, nil
}

// close hangs up the workers' sessions.
func (l *labLoad) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pool != nil {
		l.pool.close()
		l.pool = nil
	}
}
