package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"redline/internal/bench"
	"redline/internal/benchdata"
	"redline/internal/remote"
	"redline/internal/serverhost"
)

// bench --workers N and --workers ssh:HOST,... run each test in workers
// that are redline sessions (docs/remote.md): N sessions of this binary
// started over pipes (remote.LocalWorker, no ssh), or one on each host
// through the user's ssh (bench_ssh.go). Either way each is told its share
// of -c, -n and --rate inside the session (bench.WorkerSpec: the password
// never reaches a command line), runs it through one ready barrier
// (bench.RunWorkers), and the Summaries merge exactly (bench.MergeWorkers).
// The sessions are opened once for the whole run (a lab's, too) and closed
// at its end; a session whose client goes away stops its worker by itself.

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

// workerPool is the open sessions of a run's workers, numbered from 1 in
// order; hosts[i] is "" for a local worker.
type workerPool struct {
	hosts   []string
	clients []*remote.Client
	open    func(i int) (*remote.Client, error)
}

// openWorkers opens n workers' sessions at once with open; when one
// fails, the others are closed and the error names the worker.
func openWorkers(hosts []string, open func(i int) (*remote.Client, error)) (*workerPool, error) {
	w := &workerPool{hosts: hosts, clients: make([]*remote.Client, len(hosts)), open: open}
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	for i := range hosts {
		wg.Go(func() {
			if w.clients[i], errs[i] = open(i); errs[i] != nil {
				errs[i] = fmt.Errorf("%s: %w", bench.WorkerName(i+1, hosts[i]), errs[i])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			w.close()
			return nil, err
		}
	}
	return w, nil
}

// workerSessions opens the sessions of a run's workers: one on each of
// hosts through ssh (f: their settings), or, with no hosts, n of this
// binary on this host over pipes. It is the one place bench and the lab
// choose between the two; the pool then speaks one protocol to either.
func workerSessions(ctx context.Context, s *streams, hosts []string, n int, f *sshWorkerFlags) (*workerPool, error) {
	if len(hosts) > 0 {
		return sshWorkers(ctx, s, hosts, f)
	}
	return localWorkers(ctx, n)
}

// localWorkers starts n worker sessions of this binary on this host.
func localWorkers(ctx context.Context, n int) (*workerPool, error) {
	hb := localWorkerHeartbeat
	return openWorkers(make([]string, n), func(int) (*remote.Client, error) {
		return remote.LocalWorker(ctx, remote.LocalOptions{Version: Version(), HeartbeatTimeout: hb, DeadAfter: workerDeadAfter(hb)})
	})
}

// localWorkerHeartbeat is the local worker sessions' heartbeat timeout
// (tests shorten it).
var localWorkerHeartbeat = remote.DefaultHeartbeatTimeout

// workerDeadAfter is how long a worker's session may say nothing (its
// heartbeats' replies included) before it is taken for dead: killed
// (local) or hung up (ssh), and its worker failed, in a run of -n
// requests too, which has no result deadline.
func workerDeadAfter(heartbeat time.Duration) time.Duration { return heartbeat + 10*time.Second }

// run runs t with one share in each worker's session; a session that
// ended since the last run (its process killed, its link lost) is opened
// again first, so that one lost worker fails one run of a lab, not every
// later one.
func (w *workerPool) run(ctx context.Context, o bench.Options, t bench.Test, data []byte, wo bench.WorkersOptions) (*benchdata.Summary, error) {
	for i, c := range w.clients {
		select {
		case <-c.Done():
			c.Close()
			var err error
			if w.clients[i], err = w.open(i); err != nil {
				return nil, fmt.Errorf("%s: open its session again: %w", bench.WorkerName(i+1, w.hosts[i]), err)
			}
		default:
		}
	}
	specs := bench.WorkerSpecs(o, t, data, len(w.hosts), wo.Progress != nil)
	ws := make([]bench.WorkerSlot, len(specs))
	for i, spec := range specs {
		bw, err := serverhost.NewBenchWorker(w.clients[i], w.hosts[i], spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", bench.WorkerName(i+1, w.hosts[i]), err)
		}
		ws[i] = bench.WorkerSlot{N: i + 1, Host: w.hosts[i], Share: bench.ShareOf(spec), Worker: bw}
	}
	return bench.RunWorkers(ctx, ws, wo)
}

// close hangs up every session: each stops whatever worker it still runs.
func (w *workerPool) close() {
	var wg sync.WaitGroup
	for _, c := range w.clients {
		if c != nil {
			wg.Go(func() { hangUp(c) })
		}
	}
	wg.Wait()
}
