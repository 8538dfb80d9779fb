package cli

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"redline/internal/bench"
	"redline/internal/labdata"
	"redline/internal/remote"
)

// bench --workers ssh:HOST[,HOST...] runs one worker on each host: a
// redline session there (docs/remote.md), reached through the user's own
// ssh, the same sessions as --ssh and the lab's ssh target, runs its
// share (serverhost.NewBenchWorker) through the ready barrier (bench.RunWorkers),
// as local workers do (bench_workers.go). A session whose link dies stops
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

// sshWorkers opens a worker session on every host, at once.
func sshWorkers(ctx context.Context, s *streams, hosts []string, f *sshWorkerFlags) (*workerPool, error) {
	hb := cmp.Or(f.heartbeat, remote.DefaultHeartbeatTimeout)
	return openWorkers(hosts, func(i int) (*remote.Client, error) {
		h := hosts[i]
		o := remote.DialOptions{SSH: remote.SSH{Target: h, Config: f.config}, Version: Version(), NoPush: f.noPush,
			StateDir: f.stateDir, HeartbeatTimeout: hb, DeadAfter: workerDeadAfter(hb),
			Notify: func(msg string) { fmt.Fprintf(s.err, "redline bench: %s: %s\n", bench.WorkerName(i+1, h), msg) }}
		dctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		c, err := remote.Dial(dctx, o)
		if err != nil {
			return nil, err
		}
		for _, cl := range c.Hello.Cleanups {
			fmt.Fprintf(s.err, "redline bench: on %s an earlier session ended (%s) and stopped %d bench worker(s), %d redis-server(s)%s\n",
				h, cl.Reason, cl.Benches, len(cl.Stopped), cleanupErrors(cl))
		}
		return c, nil
	})
}
