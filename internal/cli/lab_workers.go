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
// scenario's client.workers local processes, or one worker on each of its
// client.worker_hosts through a session there, opened at the first run
// and kept until the lab ends.
type labLoad struct {
	s   *streams
	f   *labFlags
	mu  sync.Mutex
	ssh *sshWorkers
}

func (l *labLoad) run(ctx context.Context, o bench.Options, t bench.Test, data []byte, c labdata.ClientSpec) (*benchdata.Summary, error) {
	// The lab's per-second series comes from the workers' merged ticks.
	wo := bench.WorkersOptions{ReadyTimeout: bench.WorkerReadyTimeout(o), ResultTimeout: bench.WorkerResultTimeout(o), Progress: o.Progress,
		Warn: func(msg string) { fmt.Fprintln(l.s.err, "redline lab: warning: "+msg) }}
	if len(c.WorkerHosts) == 0 {
		return runWorkers(ctx, o, t, data, c.Workers, wo)
	}
	if err := checkSSHWorkers(c.WorkerHosts, &sshWorkerFlags{}, o, true); err != nil {
		return nil, err
	}
	w, err := l.sessions(ctx, c.WorkerHosts)
	if err != nil {
		return nil, err
	}
	return w.run(ctx, o, t, data, wo)
}

// sessions opens the worker hosts' sessions once.
func (l *labLoad) sessions(ctx context.Context, hosts []string) (*sshWorkers, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ssh != nil {
		return l.ssh, nil
	}
	w, err := dialSSHWorkers(ctx, l.s, hosts, &sshWorkerFlags{config: l.f.sshConfig, stateDir: l.f.stateDir})
	if err != nil {
		return nil, fmt.Errorf("client.worker_hosts: %w", err)
	}
	l.ssh = w
	return w, nil
}

// close hangs up the worker hosts' sessions.
func (l *labLoad) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ssh != nil {
		l.ssh.close()
		l.ssh = nil
	}
}
