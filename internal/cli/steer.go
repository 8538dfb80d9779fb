package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"redline/internal/host"
	"redline/internal/percent"
	"redline/internal/steer"
	"redline/internal/steerspec"
	"redline/internal/tune"
)

func init() { register(newSteerCmd) }

// steerOptions are steer's flags.
type steerOptions struct {
	dryRun     bool
	period     time.Duration
	ports      []int
	pids       []int
	periods    int
	majority   float64
	minPackets uint64
	listen     string
	stateDir   string
	statusFile string
	json       bool
	sample     int
	domain     string
}

func newSteerCmd(s *streams) *cobra.Command {
	o := &steerOptions{}
	cmd := &cobra.Command{
		Use:   "steer",
		Short: "Daemon: follow each NIC queue's packets to the CPU that consumes them and move the queue's IRQ to that node",
		Long: `steer samples two kernel tracepoints on every CPU (net:napi_gro_receive_entry: which
device queue received an skb; skb:skb_copy_datagram_iovec: which CPU copied it to user
space), matches them by skb address and, every period, moves each busy queue's IRQ to a
core of the NUMA node that consumes a clear majority of its packets for --periods periods
in a row: one core per queue while cores remain, redis-server's cores last, the idlest
first. Every write goes through the tune journal (old value on disk first, read back
after); on exit (SIGINT, SIGTERM, SIGHUP) every IRQ goes back to its original affinity,
and after kill -9 the next start (or redline tune rollback) restores them. An IRQ someone
else changes after steer wrote it is reported as drift and left alone. A running irqbalance
is never stopped: steer bans just the IRQs it moves through irqbalance's socket and lifts
those bans on exit. --domain llc keeps IRQs in the consumers' last-level cache instead of
their node; with -p PORT steer follows a restarted redis-server. See docs/steer.md.`,
		Example: `  redline steer --dry-run
  redline steer -p 6379 --listen :9464
  redline steer status`,
		Args:              cobra.NoArgs,
		DisableAutoGenTag: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSteer(cmd.Context(), s, o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.dryRun, "dry-run", false, "print the moves steer would make; write nothing")
	f.DurationVar(&o.period, "period", steer.DefaultPeriod, "decision period")
	f.IntSliceVarP(&o.ports, "port", "p", nil, "steer for the redis-server listening on `PORT` (repeatable)")
	f.IntSliceVar(&o.pids, "pid", nil, "steer for this redis-server `PID` (repeatable; default: every consuming thread)")
	f.IntVar(&o.periods, "periods", steer.DefaultPeriods, "periods a node must hold the majority before an IRQ moves (hysteresis)")
	f.Float64Var(&o.majority, "majority", steer.DefaultMajority, "share of a queue's packets one node must consume")
	f.Uint64Var(&o.minPackets, "min-packets", steer.DefaultMinPackets, "packets per period that make a queue busy enough to judge")
	f.IntVar(&o.sample, "sample", steer.DefaultSample, "follow one skb in `N` (a power of two; the kernel drops the others' records before they reach the sampler)")
	f.StringVar(&o.domain, "domain", steer.DomainNode, "keep each queue's IRQ in the `DOMAIN` of the CPUs that consume its packets: node (NUMA node) or llc (CPUs sharing a last-level cache)")
	f.StringVar(&o.listen, "listen", "", "serve Prometheus metrics on `ADDR` (/metrics)")
	f.StringVar(&o.stateDir, "state-dir", tune.DefaultStateDir, "directory of the tune journal")
	f.StringVar(&o.statusFile, "status-file", steer.DefaultStatusFile, "where the current map is kept for redline steer status")
	cmd.AddCommand(newSteerStatusCmd(s, o))
	return cmd
}

func newSteerStatusCmd(s *streams, o *steerOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the queue -> IRQ -> CPU map of the running steer",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := steer.ReadStatus(o.statusFile)
			if errors.Is(err, os.ErrNotExist) {
				return exitCode(ExitFailure, fmt.Sprintf("redline steer status: %s does not exist: steer is not running (or uses another --status-file)", o.statusFile))
			}
			if err != nil {
				return exitCode(ExitError, fmt.Sprintf("redline steer status: %v", err))
			}
			if o.json {
				b, _ := os.ReadFile(o.statusFile)
				_, err = s.out.Write(b)
				return err
			}
			return steer.PrintStatus(s.out, r)
		},
	}
	cmd.Flags().StringVar(&o.statusFile, "status-file", steer.DefaultStatusFile, "status file of the running steer")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the last period's report as JSON")
	return cmd
}

func (o *steerOptions) validate() error {
	var bad error
	spec := steerspec.Spec{Period: o.period, Periods: o.periods, Majority: percent.Value(o.majority), Sample: o.sample, Domain: o.domain}
	spec.CheckGiven(func(field, format string, args ...any) {
		if bad == nil {
			bad = usageError("redline steer: --"+field+" "+format, args...)
		}
	})
	if bad != nil {
		return bad
	}
	for _, p := range o.ports {
		if p <= 0 || p > 65535 {
			return usageError("redline steer: --port %d: want 1-65535", p)
		}
	}
	return nil
}

func runSteer(ctx context.Context, s *streams, o *steerOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return exitCode(ExitError, "redline steer: needs root (perf tracepoints, /proc/irq writes); try --dry-run as root")
	}
	signaled := ctx // Main's: its cause names the signal that stops steer
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if !o.dryRun {
		// A lab tuning this host, or a second steer, would interleave
		// its journal sessions with this one's: one at a time.
		hold, err := tune.HoldStateDir(o.stateDir, "redline steer")
		if err != nil {
			return exitCode(ExitError, "redline steer: "+err.Error())
		}
		defer hold.Release()
	}
	metrics, srvErr, err := o.serveMetrics(ctx, s)
	if err != nil {
		return exitCode(ExitError, fmt.Sprintf("redline steer: --listen %s: %v", o.listen, err))
	}
	// The one steer entry point (the lab's and a session's too): it
	// restores what an earlier steer left before it starts, or refuses.
	sess, err := steer.StartSession(ctx, steer.SessionOptions{
		Period: o.period, Sample: o.sample, Domain: o.domain, PIDs: o.pids, Ports: o.ports, DryRun: o.dryRun, StateDir: o.stateDir,
		Engine: steer.Options{Periods: o.periods, Majority: o.majority, MinPackets: o.minPackets},
		OnStart: func(snap *host.Snapshot, recovered string) {
			if recovered != "" {
				fmt.Fprintf(s.err, "redline steer: %s\n", recovered)
			}
			steerNotes(s, snap, o)
			if metrics != nil {
				topo, _ := steer.TopologyIn(snap, o.domain)
				metrics.Start(steer.QueueIRQsOf(snap), topo)
				metrics.SetDryRun(o.dryRun)
			}
		},
		OnPeriod: func(r *steer.Report) {
			fmt.Fprintln(s.out, r.Line())
			if metrics != nil {
				metrics.Observe(r)
			}
			if err := steer.WriteStatus(o.statusFile, r); err != nil {
				fmt.Fprintf(s.err, "redline steer: status file: %v\n", err)
			}
		},
	})
	if err != nil {
		stop() // the metrics server ends with ctx
		<-srvErr
		return exitCode(ExitError, fmt.Sprintf("redline steer: %v", err))
	}
	select {
	case <-ctx.Done():
	case <-sess.Done():
	}
	interrupted := signaled.Err() != nil || ctx.Err() != nil // before stop() cancels ctx
	rec, rerr := sess.Stop(context.WithoutCancel(ctx))
	os.Remove(o.statusFile)
	st, took := rec.Sampler, rec.Finished.Sub(rec.Started)
	fmt.Fprintf(s.err, "redline steer: sampler read %d events (%d lost) in %s, using %s of CPU (%.2f%% of one CPU)\n",
		st.Events, st.Lost, took.Round(time.Millisecond), st.CPU.Round(time.Millisecond), 100*st.CPU.Seconds()/took.Seconds())
	if !o.dryRun {
		fmt.Fprintf(s.err, "redline steer: %s\n", rec.Restored)
		if rerr != nil {
			return exitCode(ExitFailure, fmt.Sprintf("redline steer: %v (run redline tune rollback --state-dir %s)", rerr, o.stateDir))
		}
	}
	stop()
	if err := <-srvErr; err != nil {
		return exitCode(ExitFailure, fmt.Sprintf("redline steer: --listen: %v", err))
	}
	if rec.RunError != "" {
		return exitCode(ExitFailure, "redline steer: "+rec.RunError)
	}
	if interrupted {
		// Stopped by a signal, restored: 128+signal (130 for SIGINT, 143
		// for SIGTERM), as for every command.
		return exitCode(ExitSignaled, "")
	}
	return nil
}

// steerNotes says what the user should know before steer starts.
func steerNotes(s *streams, snap *host.Snapshot, o *steerOptions) {
	n := len(steer.QueueIRQsOf(snap))
	topo, _ := steer.TopologyIn(snap, o.domain)
	fmt.Fprintf(s.err, "redline steer: %d receive-queue IRQs on %d NUMA node(s), %d %s domain(s); period %s, move after %d period(s) of a %.0f%% majority\n",
		n, max(1, len(snap.NUMA.Nodes)), topo.Domains(), o.domain, o.period, o.periods, 100*o.majority)
	if n == 0 {
		fmt.Fprintln(s.err, "redline steer: no NIC queue IRQs found (virtual NICs such as veth have none): steer will only report")
	} else if why := steer.NothingToSteerToward(snap); why != "" {
		fmt.Fprintln(s.err, "redline steer: "+why)
	}
	if snap.Irqbalance.Running && !o.dryRun {
		fmt.Fprintf(s.err, "redline steer: irqbalance is running (pid %v): steer bans each IRQ it moves from irqbalance's balancing through irqbalance's socket (settings ban irqs), never stops it, and lifts exactly those bans on exit (after kill -9: at the next start); if irqbalance moves a steered IRQ anyway, that is drift, reported and left alone\n", snap.Irqbalance.PIDs)
	}
}

// serveMetrics starts the Prometheus endpoint when --listen is set; the
// channel reports how serving ended once ctx ends.
func (o *steerOptions) serveMetrics(ctx context.Context, s *streams) (*steer.Metrics, <-chan error, error) {
	errc := make(chan error, 1)
	if o.listen == "" {
		errc <- nil
		return nil, errc, nil
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return nil, nil, err
	}
	reg := prometheus.NewRegistry()
	m := steer.NewMetrics(reg)
	m.SetBuild(Version())
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(s.err, "redline steer: metrics on http://%s/metrics\n", ln.Addr())
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		errc <- err
	}()
	go func() { <-ctx.Done(); srv.Close() }()
	return m, errc, nil
}
