package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"redline/internal/guard"
	"redline/internal/redisadmin"
	"redline/internal/serverhost"
	"redline/internal/tune"
)

// guardOptions are the guard's flags, shared by tune apply --guard and
// redline guard.
type guardOptions struct {
	on          bool // tune apply --guard
	window      time.Duration
	baseline    time.Duration
	interval    time.Duration
	probeRate   float64
	th          guard.Thresholds
	listen      string
	metricsFile string
}

// flags defines the guard's flags; window is the default watch.
func (g *guardOptions) flags(cmd *cobra.Command, window time.Duration) {
	f := cmd.Flags()
	g.th = guard.DefaultThresholds()
	f.DurationVar(&g.window, "guard-window", window, "how long to watch the server after the change")
	f.DurationVar(&g.baseline, "guard-baseline", guard.DefaultBaseline, "how long to watch it before the change (the baseline)")
	f.DurationVar(&g.interval, "guard-interval", guard.DefaultInterval, "one tick: how often INFO is read and the rules are checked")
	f.Float64Var(&g.probeRate, "guard-probe-rate", guard.DefaultProbeRate, "the probe's PING per second, open loop on one connection (its cost: docs/benchmarks.md)")
	f.IntVar(&g.th.Span, "guard-span", g.th.Span, "ticks each rule looks at")
	f.IntVar(&g.th.Confirm, "guard-confirm", g.th.Confirm, "checks in a row a rule must fail before it trips")
	f.Float64Var(&g.th.LatencyRatio, "guard-latency-ratio", g.th.LatencyRatio, "trip when the probe's p99 passes this many times the baseline's")
	f.DurationVar(&g.th.LatencyFloor, "guard-latency-floor", g.th.LatencyFloor, "... and the baseline's plus this much")
	f.Float64Var(&g.th.ServerLatencyRatio, "guard-server-latency-ratio", g.th.ServerLatencyRatio, "trip when the server's time per call (commandstats) passes this many times the baseline's")
	f.DurationVar(&g.th.ServerLatencyFloor, "guard-server-latency-floor", g.th.ServerLatencyFloor, "... and the baseline's plus this much")
	f.Float64Var(&g.th.ErrorsRatio, "guard-errors-ratio", g.th.ErrorsRatio, "trip when error replies a second pass this many times the baseline's")
	f.Float64Var(&g.th.ErrorsFloor, "guard-errors-floor", g.th.ErrorsFloor, "... plus this many a second")
	f.Float64Var(&g.th.RejectedFloor, "guard-rejected-floor", g.th.RejectedFloor, "trip when rejected connections a second pass the baseline's plus this")
	f.Float64Var(&g.th.EvictionsRatio, "guard-evictions-ratio", g.th.EvictionsRatio, "trip when evictions a second pass this many times the baseline's")
	f.Float64Var(&g.th.EvictionsFloor, "guard-evictions-floor", g.th.EvictionsFloor, "... plus this many a second")
	f.Float64Var(&g.th.MemoryMax, "guard-memory-max", g.th.MemoryMax, "trip when RSS reaches this share of the host's memory, or used memory of maxmemory (when the baseline was below)")
	f.Float64Var(&g.th.RSSGrowth, "guard-rss-growth", g.th.RSSGrowth, "trip when RSS passes this many times the baseline's (and 64 MiB more)")
	f.Float64Var(&g.th.CPURatio, "guard-cpu-ratio", g.th.CPURatio, "trip when the server's CPU per command passes this many times the baseline's ...")
	f.Float64Var(&g.th.CPUFloor, "guard-cpu-floor", g.th.CPUFloor, "... while it uses this many more cores than in the baseline")
	f.Float64Var(&g.th.OpsDrop, "guard-ops-drop", g.th.OpsDrop, "trip when commands a second fall below this share of the baseline's (0: off)")
	f.Float64Var(&g.th.OpsMin, "guard-ops-min", g.th.OpsMin, "... when the baseline served at least this many a second")
	f.StringVar(&g.listen, "guard-listen", "", "serve the guard's Prometheus metrics on `ADDR` (/metrics) while it runs")
	f.StringVar(&g.metricsFile, "guard-metrics-file", "", "write the guard's metrics to `FILE` (Prometheus text, for node_exporter's textfile collector) each tick and at the end")
}

func (g *guardOptions) check(name string) error {
	if err := g.th.Validate(); err != nil {
		return usageError("redline %s: %v", name, err)
	}
	switch {
	case g.window <= 0 || g.baseline <= 0 || g.interval <= 0:
		return usageError("redline %s: --guard-window, --guard-baseline and --guard-interval must be positive", name)
	case g.baseline < time.Duration(g.th.Span)*g.interval:
		return usageError("redline %s: --guard-baseline %s is shorter than one span (%d ticks of %s): lengthen it", name, g.baseline, g.th.Span, g.interval)
	case g.probeRate <= 0 || g.probeRate > 10000:
		return usageError("redline %s: --guard-probe-rate %v: want 1-10000 a second", name, g.probeRate)
	}
	return nil
}

// options are the guard's options for the server r.
func (g *guardOptions) options(r *serverhost.RedisTarget, netns string) guard.Options {
	return guard.Options{
		Monitor: guard.MonitorOptions{
			Redis:     redisadmin.Options{Network: r.Network, Addr: r.Addr, Username: r.User, Password: r.Password, NetNS: netns},
			ProbeRate: g.probeRate, Interval: g.interval,
		},
		Baseline: g.baseline, Window: g.window, Thresholds: g.th,
	}
}

// guardTarget is the server the guard watches: --redis or -p, else the
// plan's redis.addr.
func guardTarget(o *tuneOptions, p *tune.Plan, warn io.Writer) (*serverhost.RedisTarget, error) {
	if r := o.redisFor(p, warn); r != nil {
		return r, nil
	}
	if p != nil && p.Redis != nil && p.Redis.Addr != "" {
		return &serverhost.RedisTarget{Network: p.Redis.Network, Addr: p.Redis.Addr, User: p.Redis.User}, nil
	}
	return nil, usageError("redline: the guard needs the server to watch: give --redis HOST:PORT or -p PORT (or redis.addr in the plan)")
}

// guardActions are the guard's apply and rollback through h's journal:
// the calls tune apply and tune rollback --session make.
func guardActions(s *streams, o *tuneOptions, h serverhost.Host, p *tune.Plan, redis *serverhost.RedisTarget) guard.Actions {
	return guard.Actions{
		Apply: func(ctx context.Context) (string, error) {
			res, err := h.TuneApply(ctx, p, redis, serverhost.Kept)
			if res == nil {
				return "", err
			}
			for _, oc := range res.Outcomes {
				tunePrintOutcome(s.out, oc)
			}
			if res.Count(tune.StatusApplied) == 0 {
				return "", err
			}
			return res.Session, err
		},
		Rollback: func(ctx context.Context, id string) (string, error) {
			res, err := h.TuneRollback(ctx, serverhost.TuneRollbackArgs{Session: id, RedisPassword: o.password, Exclusive: true})
			if res == nil {
				return "", err
			}
			for _, oc := range res.Outcomes {
				tunePrintOutcome(s.out, oc)
			}
			return fmt.Sprintf("session %s: restored %d, left alone (drift) %d, already undone (gone) %d, failed %d", id,
				res.Count(tune.StatusRestored), res.Count(tune.StatusDrift), res.Count(tune.StatusGone), res.Count(tune.StatusRestoreFailed)), err
		},
		Sessions: func(ctx context.Context, since time.Time) ([]string, error) {
			rep, err := h.TuneStatus(ctx, o.password)
			if err != nil {
				return nil, err
			}
			var ids []string
			for _, sess := range rep.Sessions {
				at, perr := time.Parse("2006-01-02 15:04:05 MST", sess.Started)
				if perr == nil && !at.Before(since.Truncate(time.Second)) {
					ids = append(ids, sess.ID)
				}
			}
			return ids, nil
		},
	}
}

// guardMetrics starts the guard's metrics (--guard-listen,
// --guard-metrics-file): the tick and end callbacks, and a stop.
func (g *guardOptions) metrics(ctx context.Context, s *streams, name string) (func(guard.Event), func(*guard.Verdict), func(), error) {
	if g.listen == "" && g.metricsFile == "" {
		return nil, func(*guard.Verdict) {}, func() {}, nil
	}
	reg := prometheus.NewRegistry()
	m := guard.NewMetrics(reg)
	write := func() {
		if g.metricsFile != "" {
			if err := prometheus.WriteToTextfile(g.metricsFile, reg); err != nil {
				fmt.Fprintf(s.err, "redline %s: metrics file: %v\n", name, err)
			}
		}
	}
	stop := func() {}
	if g.listen != "" {
		ln, err := net.Listen("tcp", g.listen)
		if err != nil {
			return nil, nil, nil, usageError("redline %s: --guard-listen %s: %v", name, g.listen, err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
		fmt.Fprintf(s.err, "redline %s: metrics on http://%s/metrics\n", name, ln.Addr())
		go srv.Serve(ln)
		stop = func() { srv.Close() }
	}
	tick := func(e guard.Event) { m.Observe(e); write() }
	end := func(v *guard.Verdict) { m.End(v); write() }
	return tick, end, stop, nil
}

// runGuarded applies p under the guard: baseline, apply, watch; a tripped
// rule rolls it back (exit 1).
func runGuarded(ctx context.Context, s *streams, name string, o *tuneOptions, g *guardOptions, h serverhost.Host, p *tune.Plan, planPath string) error {
	if h.Info().SSH != "" {
		return usageError("redline %s: the guard with --ssh is not supported yet: run redline guard on the server host (docs/guard.md)", name)
	}
	r, err := guardTarget(o, p, s.err)
	if err != nil {
		return err
	}
	gopts := g.options(r, o.netns)
	tick, end, stop, err := g.metrics(ctx, s, name)
	if err != nil {
		return err
	}
	defer stop()
	gopts.OnTick = func(e guard.Event) {
		guardPrintTick(s.err, name, e)
		if tick != nil {
			tick(e)
		}
	}
	claim, err := guard.NewClaim(o.stateDir, &guard.State{Plan: planPath})
	if err != nil {
		return exitCode(ExitError, fmt.Sprintf("redline %s: %v", name, err))
	}
	defer claim.Release()
	fmt.Fprintf(s.err, "redline %s: guard %s: baseline of %s on %s, then the change, then a watch of %s (probe %g PING/s)\n",
		name, claim.State.ID, g.baseline, r.Addr, g.window, g.probeRate)
	v, err := guard.Run(ctx, claim, gopts, guardActions(s, o, h, p, r))
	end(v)
	return guardExit(s, name, v, err)
}

// guardPrintTick says when a tick could not read the server (the probe or
// INFO failed): the latency rule counts such a tick as no answer.
func guardPrintTick(w io.Writer, name string, e guard.Event) {
	if e.Err != nil {
		fmt.Fprintf(w, "redline %s: guard: %v\n", name, e.Err)
	}
}

// guardExit prints the verdict and maps it to the exit status: 0 kept, 1
// tripped and rolled back (or the rollback failed), 2 could not run.
func guardExit(s *streams, name string, v *guard.Verdict, err error) error {
	if v != nil && v.State != nil {
		guardPrintVerdict(s.out, v)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, guard.ErrTripped):
		return exitCode(ExitFailure, fmt.Sprintf("redline %s: guard tripped (%s); the change was rolled back", name, v.Trips[0].Rule))
	case v != nil && v.State != nil && (v.State.Phase == guard.PhaseRolledBack || v.State.Phase == guard.PhaseFailed):
		return exitCode(ExitFailure, fmt.Sprintf("redline %s: %v", name, err))
	}
	return exitCode(ExitError, fmt.Sprintf("redline %s: %v", name, err))
}

func guardPrintVerdict(w io.Writer, v *guard.Verdict) {
	st := v.State
	fmt.Fprintf(w, "\nguard %s: %s", st.ID, st.Phase)
	if st.Detail != "" {
		fmt.Fprintf(w, ": %s", st.Detail)
	}
	fmt.Fprintln(w)
	if b := st.Baseline; b != nil {
		fmt.Fprintf(w, "  baseline: probe p99 %.3f ms, %.0f commands/s, %.2f errors/s, CPU %.2f cores, RSS %d MiB\n",
			b.ProbeP99Ms, b.CommandsPerSec, b.ErrorsPerSec, b.CPU, b.RSS>>20)
	}
	for _, tr := range v.Trips {
		fmt.Fprintf(w, "  tripped %s\n", tr)
	}
	if v.Rollback != "" {
		fmt.Fprintf(w, "  rollback: %s\n", v.Rollback)
	}
	for _, r := range st.Resumed {
		fmt.Fprintf(w, "  resumed %s\n", r)
	}
	if v.Requests > 0 {
		fmt.Fprintf(w, "  the guard's own load: %d PING, %d INFO\n", v.Requests, v.INFOs)
	}
}

type guardCmdOptions struct {
	tuneOptions
	guardOptions
	yes    bool
	resume string
}

func init() { register(newGuardCmd) }

func newGuardCmd(s *streams) *cobra.Command {
	o := &guardCmdOptions{}
	cmd := &cobra.Command{
		Use:   "guard [PLAN --yes | --resume POLICY]",
		Short: "Apply a plan and watch the server for hours, rolling it back when it hurts; finish guards a crash left",
		Long: `guard applies a plan as tune apply --guard does, for a long watch (a systemd
unit runs it): a baseline of the server's health, the change, then the same
signals compared with the baseline by stated rules (docs/guard.md). A rule
that trips rolls the change back through the journal at once and exits 1.

A guard journals what it is doing in --state-dir/guard. A guard that was
killed (kill -9, a crash, a reboot) leaves its change in the journal and its
state open: guard --resume watch takes every such guard over and watches on
against its journaled baseline (a full window when its window ended while
nobody watched); --resume rollback rolls each back. tune status names them.

  redline guard plan.yaml --yes -p 6379 --guard-window 6h
  redline guard --resume watch -p 6379

Exit status: 0 kept (or nothing to resume), 1 tripped and rolled back (or a
rollback failed), 2 could not run.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGuardCmd(cmd.Context(), s, o, args)
		},
	}
	o.stateFlags(cmd)
	o.hostFlags(cmd)
	o.guardOptions.flags(cmd, 6*time.Hour)
	cmd.Flags().BoolVar(&o.yes, "yes", false, "really apply")
	cmd.Flags().StringVar(&o.resume, "resume", "", "finish the guards a killed redline left: `watch` (on, against their baseline) or rollback")
	return cmd
}

func runGuardCmd(ctx context.Context, s *streams, o *guardCmdOptions, args []string) error {
	if err := o.checkRoot(); err != nil {
		return err
	}
	if err := o.guardOptions.check("guard"); err != nil {
		return err
	}
	switch {
	case o.resume != "" && len(args) > 0:
		return usageError("redline guard: give a PLAN or --resume, not both")
	case o.resume != "":
		return runGuardResume(ctx, s, o)
	case len(args) == 0:
		return usageError("redline guard: give a PLAN to apply under the guard, or --resume watch|rollback")
	}
	p, err := tune.ReadPlanFile(args[0])
	if err != nil {
		return exitCode(ExitError, "redline guard: "+err.Error())
	}
	if !o.yes {
		return exitCode(ExitError, "redline guard: nothing changed: add --yes to apply this plan under the guard")
	}
	h, err := o.remote.openHost(ctx, s, "guard", o.local())
	if err != nil {
		return err
	}
	defer closeHost(s, "guard", h)
	return runGuarded(ctx, s, "guard", &o.tuneOptions, &o.guardOptions, h, p, args[0])
}

// runGuardResume takes over the guards killed redlines left.
func runGuardResume(ctx context.Context, s *streams, o *guardCmdOptions) error {
	if o.resume != guard.ResumeWatch && o.resume != guard.ResumeRollback {
		return usageError("redline guard: --resume %q: want watch or rollback", o.resume)
	}
	orphans, err := guard.Orphans(o.stateDir)
	if err != nil {
		return exitCode(ExitError, "redline guard: "+err.Error())
	}
	if len(orphans) == 0 {
		fmt.Fprintln(s.out, "no guard to resume: every journaled guard finished or is running")
		return nil
	}
	h, err := o.remote.openHost(ctx, s, "guard", o.local())
	if err != nil {
		return err
	}
	defer closeHost(s, "guard", h)
	tick, end, stop, err := o.metrics(ctx, s, "guard")
	if err != nil {
		return err
	}
	defer stop()
	var errs []error
	for _, c := range orphans {
		r := &serverhost.RedisTarget{Network: c.State.RedisNetwork, Addr: c.State.RedisAddr, User: c.State.RedisUser, Password: o.password}
		gopts := o.options(r, c.State.RedisNetNS)
		gopts.OnTick = tick
		fmt.Fprintf(s.err, "redline guard: resuming guard %s (%s, session %s, last heard of %s)\n",
			c.State.ID, c.State.Phase, c.State.Session, c.State.Heartbeat.Format(time.DateTime))
		v, err := guard.Resume(ctx, c, gopts, guardActions(s, &o.tuneOptions, h, nil, r), o.resume)
		c.Release()
		end(v)
		if err := guardExit(s, "guard", v, err); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Error())
		}
		return exitCode(ExitFailure, strings.Join(msgs, "\n"))
	}
	return nil
}

// guardPrintOpen names the guards that have not finished: the ones a live
// redline is running, and the ones a killed one left, whose change nobody
// watches (tune status).
func guardPrintOpen(w io.Writer, stateDir string) {
	states, alive, err := guard.ReadStates(stateDir)
	if err != nil {
		fmt.Fprintf(w, "\nguards: %v\n", err)
		return
	}
	for i, st := range states {
		if !st.Open() {
			continue
		}
		if alive[i] {
			fmt.Fprintf(w, "\nguard %s (pid %d) is %s session %s of %s until %s\n", st.ID, st.PID, st.Phase, st.Session, st.RedisAddr, st.WatchEnds.Format(time.DateTime))
			continue
		}
		fmt.Fprintf(w, "\nguard %s was killed while %s (session %s of %s, last heard of %s): its change is NOT watched; run redline guard --resume watch (or rollback)%s\n",
			st.ID, st.Phase, st.Session, st.RedisAddr, st.Heartbeat.Format(time.DateTime), tuneStateDirFlag(stateDir))
	}
}
