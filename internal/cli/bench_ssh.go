package cli

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"redline/internal/bench"
	"redline/internal/benchdata"
	"redline/internal/labdata"
	"redline/internal/remote"
)

// bench --workers ssh:HOST[,HOST...] runs one worker on each host: a
// redline session there (docs/remote.md), reached through the user's own
// ssh, the same sessions as --ssh and the lab's ssh target, runs its
// share (remote.BenchWorker) through the same ready barrier as local
// worker processes (bench.RunWorkers). The sessions are opened once for
// the whole run and closed at its end; a session whose link dies stops
// its worker by itself.

// sshWorkerFlags are the settings of the sessions of ssh workers.
type sshWorkerFlags struct {
	config    string
	stateDir  string
	noPush    bool
	heartbeat time.Duration
}

func (w *sshWorkerFlags) define(fl *pflag.FlagSet) {
	fl.StringVar(&w.config, "ssh-config", "", "with --workers ssh:...: this ssh_config `FILE` instead of yours (ssh -F): ports, keys, known_hosts")
	fl.BoolVar(&w.noPush, "no-push", false, "with --workers ssh:...: refuse, rather than copy this redline there, when a host's redline is missing or another version")
	fl.StringVar(&w.stateDir, "state-dir", "", "with --workers ssh:...: the sessions' state `DIR` on the hosts (their default when empty)")
	fl.DurationVar(&w.heartbeat, "ssh-heartbeat", 0, "with --workers ssh:...: a host's session stops its worker when nothing came from here for this long (default 30s)")
}

// checkSSHWorkers refuses ssh settings without ssh workers, and a
// server address the remote workers cannot reach: this host's loopback
// or a unix socket.
func checkSSHWorkers(hosts []string, f *sshWorkerFlags, o bench.Options, hostSet bool) error {
	if len(hosts) == 0 {
		if f.config != "" || f.stateDir != "" || f.noPush || f.heartbeat != 0 {
			return fmt.Errorf("--ssh-config, --state-dir, --no-push and --ssh-heartbeat are for --workers ssh:HOST,...")
		}
		return nil
	}
	if f.heartbeat != 0 && (f.heartbeat < remote.MinHeartbeatTimeout || f.heartbeat > remote.MaxHeartbeatTimeout) {
		return fmt.Errorf("--ssh-heartbeat %s is not in %s..%s", f.heartbeat, remote.MinHeartbeatTimeout, remote.MaxHeartbeatTimeout)
	}
	if o.Network == "unix" {
		return fmt.Errorf("--workers ssh:%s: a unix socket (-s) is this host's; give -h and -p, an address of the server those hosts reach", strings.Join(hosts, ","))
	}
	h, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return err
	}
	if labdata.LoopbackHost(h) {
		how := "give -h an address of the server that they reach"
		if !hostSet {
			how = "-h defaults to 127.0.0.1: " + how
		}
		return fmt.Errorf("--workers ssh:%s sends the load from those hosts, which cannot reach %s, this host's loopback (%s)", strings.Join(hosts, ","), o.Addr, how)
	}
	return nil
}

// sshWorkers are the open sessions of a run's ssh workers.
type sshWorkers struct {
	hosts   []string
	clients []*remote.Client
}

// dialSSHWorkers opens a session on every host, at once.
func dialSSHWorkers(ctx context.Context, s *streams, hosts []string, f *sshWorkerFlags) (*sshWorkers, error) {
	w := &sshWorkers{hosts: hosts, clients: make([]*remote.Client, len(hosts))}
	errs := make([]error, len(hosts))
	hb := cmp.Or(f.heartbeat, remote.DefaultHeartbeatTimeout)
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() {
			o := remote.DialOptions{SSH: remote.SSH{Target: h, Config: f.config}, Version: Version(), NoPush: f.noPush,
				StateDir: f.stateDir, HeartbeatTimeout: hb, DeadAfter: hb + 10*time.Second,
				Notify: func(msg string) { fmt.Fprintf(s.err, "redline bench: %s: %s\n", bench.WorkerName(i+1, h), msg) }}
			dctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			c, err := remote.Dial(dctx, o)
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", bench.WorkerName(i+1, h), err)
				return
			}
			for _, cl := range c.Hello.Cleanups {
				fmt.Fprintf(s.err, "redline bench: on %s an earlier session ended (%s) and stopped %d bench worker(s), %d redis-server(s)%s\n",
					h, cl.Reason, cl.Benches, len(cl.Stopped), cleanupErrors(cl))
			}
			w.clients[i] = c
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

// run runs t with one worker on each host.
func (w *sshWorkers) run(ctx context.Context, o bench.Options, t bench.Test, data []byte, wo bench.WorkersOptions) (*benchdata.Summary, error) {
	specs := bench.WorkerSpecs(o, t, data, len(w.hosts), wo.Progress != nil)
	ws := make([]bench.WorkerSlot, len(specs))
	for i, spec := range specs {
		bw, err := remote.NewBenchWorker(w.clients[i], w.hosts[i], spec)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", bench.WorkerName(i+1, w.hosts[i]), err)
		}
		ws[i] = bench.WorkerSlot{N: i + 1, Host: w.hosts[i], Share: bench.ShareOf(spec), Worker: bw}
	}
	return bench.RunWorkers(ctx, ws, wo)
}

// close hangs up every session: each stops whatever worker it still runs.
func (w *sshWorkers) close() {
	var wg sync.WaitGroup
	for _, c := range w.clients {
		if c != nil {
			wg.Go(func() { hangUp(c) })
		}
	}
	wg.Wait()
}
