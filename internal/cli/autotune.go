package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"redline/internal/atomicfile"
	"redline/internal/autotune"
	"redline/internal/knobs"
	"redline/internal/serverhost"
	"redline/internal/target"
)

func init() { register(newAutotuneCmd) }

type autotuneOptions struct {
	target   target.Spec
	remote   remoteOptions
	password string // the attached server's: never journaled or printed
	// clusterAuthAny is --cluster-auth-any: a decision of this command
	// line, never journaled.
	clusterAuthAny bool
	// addrConfirmed: on --resume, the command line named the journal's
	// --addr or --socket again (a password may go there).
	addrConfirmed bool
	dir           string
	resume        string
	stateDir      string
	budget        time.Duration
	apply         bool
	engine        autotune.Options
	build         autotuneBuildFlags
}

const defaultAutotuneWorkload = "-t set -c 50 -P 16 -d 64 --duration 2s --warmup 500ms"

func newAutotuneCmd(s *streams) *cobra.Command {
	o := &autotuneOptions{}
	cmd := &cobra.Command{
		Use:   "autotune",
		Short: "Search the knob catalog with paired, error-controlled measurements; keep only what is proven and confirmed",
		Long: `autotune starts a redis-server (with --server-config lines) here, on a server
host over --ssh, or in a network namespace (--netns), or attaches an existing one
(--addr or --socket: CONFIG SET and host knobs only, never flushed), or a Redis
Cluster (--cluster: an existing one through --addr, or one started here; every
trial on every node, the load in bench's cluster mode), measures the
baseline and its noise, then screens the catalog's knobs against the current best
in paired rounds of randomly ordered runs, keeps a knob only when its interval
clears at the session's error budget (5% for all keep decisions together),
refines numeric knobs, and confirms the final plan against the baseline on fresh
rounds. Every trial is applied through tune's journal and rolled back after its
measurement: after a crash, "redline tune rollback --state-dir DIR/tune" restores
the host; over --ssh the session there undoes a trial by itself when the link dies. Ctrl-C rolls back and keeps a partial report; --resume DIR continues.
With --p99-max a setting is kept only when its p99 is shown within the bound too.
It writes DIR/plan.yaml (for redline tune apply; only a confirmed plan), DIR/report.md,
DIR/report.html and DIR/result.json; --apply leaves a confirmed plan applied to an
attached server (journaled). The procedure: docs/autotune.md.

Exit status: 0 when the session ran to its end (confirmed or nothing to keep),
1 when the plan was not confirmed or a trial failed, 2 on bad input.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.finish(cmd); err != nil {
				return err
			}
			return runAutotune(cmd.Context(), s, o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.target.ServerConfig, "server-config", nil, `a redis.conf line the managed server starts with (repeatable): "hz 500"`)
	f.StringVar(&o.target.Workload, "workload", defaultAutotuneWorkload, "the redis-benchmark style line of one measurement (one test)")
	f.StringVar(&o.target.Objective, "objective", "throughput", "throughput, or p99 (with --rate in the workload: p99 at a fixed offered rate)")
	f.DurationVar(&o.target.P99Max, "p99-max", 0, "with --objective throughput: keep only settings whose p99 is shown at or below this (2ms)")
	f.BoolVar(&o.apply, "apply", false, "leave the confirmed plan applied (journaled: redline tune rollback undoes it); needs a server that outlives the session")
	f.StringArrayVar(&o.target.Knobs, "knob", nil, "search only this catalog knob (repeatable; default every allowed one this target can apply)")
	f.StringArrayVar(&o.target.Allow, "allow", nil, "also try this review-class knob (repeatable)")
	f.BoolVar(&o.target.AllowHostWide, "allow-host-wide", false, "try host-wide knobs (sysctls, /sys files, IRQ and RPS profiles, steer) although other redis-servers run on this host")
	o.remote.flags(cmd)
	o.remote.linkFlags(cmd)
	f.StringVar(&o.target.StateDir, "state-dir", "", "the tune journal of the trials (default DIR/tune here; with --ssh the server host's default)")
	f.StringVar(&o.target.Addr, "addr", "", "tune this existing server, `HOST:PORT` (CONFIG SET and host knobs only; never restarted, flushed or stopped)")
	f.StringVar(&o.target.Socket, "socket", "", "tune this existing server by its unix socket `PATH` on this host")
	f.StringVar(&o.target.User, "user", "", "with --addr or --socket: the Redis ACL user")
	f.StringVar(&o.target.PassFile, "pass-file", "", "with --addr or --socket: the Redis password from the first line of `FILE` (default: $REDISCLI_AUTH)")
	o.build.define(cmd)
	f.BoolVar(&o.target.NetNS, "netns", false, "start the managed server in a network namespace of its own, the load coming from another (root)")
	o.clusterFlags(cmd)
	f.StringVar(&o.dir, "dir", "", "the session's directory: journal, tune state, plan, report (default ./autotune-TIME)")
	f.StringVar(&o.resume, "resume", "", "continue the session journaled in this directory")
	f.DurationVar(&o.budget, "budget", 15*time.Minute, "stop starting comparisons that could end after this")
	f.IntVar(&o.engine.MinRounds, "min-rounds", 0, "fewest paired rounds per comparison (default: the fewest a claim needs)")
	f.IntVar(&o.engine.MaxRounds, "max-rounds", 0, fmt.Sprintf("most paired rounds per comparison (default %d, or fewer: a quarter of the --budget's rounds)", autotune.DefaultMaxRounds))
	f.IntVar(&o.engine.MaxCandidates, "max-candidates", 0, fmt.Sprintf("most comparisons in the session (default %d)", autotune.DefaultMaxCandidates))
	f.Float64Var(&o.engine.Alpha, "alpha", 0, "family-wise error rate of the session's keep decisions (default 0.05)")
	f.Uint64Var(&o.engine.Seed, "seed", 0, "seed of the runs' order (default: from the clock)")
	return cmd
}

// finish checks the flags and, with --resume, takes the session's own.
func (o *autotuneOptions) finish(cmd *cobra.Command) error {
	if o.resume != "" {
		eo, err := autotune.ReadOptions(o.resume)
		if err != nil {
			return usageError("redline autotune --resume: %v", err)
		}
		given, givenRemote := o.target, o.remote
		o.target = target.Spec{} // the journal's, not this command line's
		if err := json.Unmarshal(eo.Target, &o.target); err != nil {
			return usageError("redline autotune --resume %s: the journal's target: %v", o.resume, err)
		}
		if err := o.confirmJournal(eo, given, givenRemote); err != nil {
			return usageError("redline autotune --resume %s: %v", o.resume, err)
		}
		o.engine, o.dir = eo, o.resume
		o.engine.Resume = true
	}
	if err := o.finishTarget(); err != nil {
		return err
	}
	if err := o.finishBuilds(); err != nil {
		return err
	}
	if o.target.Objective != "throughput" && o.target.Objective != "p99" {
		return usageError("redline autotune: --objective %q: throughput or p99", o.target.Objective)
	}
	switch {
	case o.target.P99Max < 0:
		return usageError("redline autotune: --p99-max %s: a bound must be positive", o.target.P99Max)
	case o.target.P99Max > 0 && o.target.Objective != "throughput":
		return usageError("redline autotune: --p99-max bounds a throughput objective; with --objective p99 the p99 is the objective")
	case o.apply:
		if why := autotuneApplyRefusal(o.target); why != "" {
			return usageError("redline autotune: %s", why)
		}
	}
	for _, name := range append(slices.Clone(o.target.Knobs), o.target.Allow...) {
		if _, ok := knobs.Lookup(name); !ok {
			return usageError("redline autotune: no knob %q in the catalog (docs/autotune.md lists them)", name)
		}
	}
	if o.dir == "" {
		o.dir = "autotune-" + time.Now().UTC().Format("20060102-150405")
	}
	if o.engine.Seed == 0 && !o.engine.Resume {
		o.engine.Seed = uint64(time.Now().UnixNano())
	}
	o.stateDir = o.target.StateDir
	if o.stateDir == "" && o.target.SSH == "" {
		o.stateDir = filepath.Join(o.dir, "tune")
	}
	o.engine.Dir, o.engine.LowerIsBetter = o.dir, o.target.Objective == "p99"
	o.engine.P99Max = float64(o.target.P99Max) / float64(time.Millisecond) // the trials' p99 are in ms
	return nil
}

func runAutotune(ctx context.Context, s *streams, o *autotuneOptions) error {
	out, runErr := target.Autotune(ctx, target.Options{
		Spec: o.target, Password: o.password, ClusterAuthAny: o.clusterAuthAny, StateDir: o.stateDir,
		Engine: o.engine, Budget: o.budget, Apply: o.apply, Undo: o.rollbackHint(), BuildProgress: s.err,
		OpenHost: func(ctx context.Context, local serverhost.LocalOptions) (serverhost.Host, error) {
			return o.remote.openHost(ctx, s, "autotune", local)
		},
		Prepare: func() error {
			if err := checkOutputs("autotune", dirOutput("--dir", o.dir)); err != nil {
				return err
			}
			if err := atomicfile.OwnDir(o.dir, 0o700); err != nil {
				return exitCode(ExitError, "redline autotune: "+err.Error())
			}
			return nil
		},
		Say:      func(l string) { fmt.Fprintln(s.out, l) },
		Ready:    func(r target.Ready) { autotunePrintReady(s.out, o, r) },
		Progress: func(t autotune.Trial) { autotunePrintTrial(s.out, t) },
	})
	if out == nil {
		return autotuneError(runErr)
	}
	o.target = out.Spec
	err := autotuneFinish(s, o, out, runErr)
	for _, l := range out.Applied {
		fmt.Fprintln(s.out, l)
	}
	if out.ApplyErr != nil && err == nil {
		err = exitCode(ExitFailure, "redline autotune: "+out.ApplyErr.Error())
	}
	if ctx.Err() != nil {
		return exitCode(ExitSignaled, "redline autotune: stopped; the host is rolled back, the partial report is in "+o.dir+" (--resume "+o.dir+" continues)")
	}
	return err
}

// autotuneError is a session that could not start, with its exit status.
func autotuneError(err error) error {
	var e *exitError
	var te *target.Error
	switch {
	case errors.As(err, &e):
		return err
	case errors.As(err, &te) && te.Fault == target.Failure:
		return exitCode(ExitFailure, "redline autotune: "+err.Error())
	}
	return exitCode(ExitError, "redline autotune: "+err.Error())
}

// autotuneFinish writes the files and prints the answer.
func autotuneFinish(s *streams, o *autotuneOptions, out *target.Outcome, runErr error) error {
	res := out.Result
	var errs []error
	errs = append(errs, atomicfile.Write(filepath.Join(o.dir, "result.json"), autotuneResultJSON(res, o.target.Builds), 0o644))
	errs = append(errs, writeAutotuneReports(o.dir, autotuneReport(o, res, out.Untested)))
	planPath := ""
	if c := res.Confirmation; c != nil && c.Confirmed {
		planPath = filepath.Join(o.dir, "plan.yaml")
		b, err := target.PlanYAML(out)
		if err == nil {
			err = atomicfile.Write(planPath, b, 0o644)
		}
		errs = append(errs, err)
	}
	autotunePrintAnswer(s.out, o, res, out.Untested, planPath)
	if err := errors.Join(errs...); err != nil {
		return exitCode(ExitFailure, "redline autotune: "+err.Error())
	}
	switch {
	case runErr != nil:
		return exitCode(ExitFailure, "redline autotune: "+runErr.Error()+" (the host is rolled back; --resume "+o.dir+" continues)")
	case res.Confirmation != nil && !res.Confirmation.Confirmed:
		return exitCode(ExitFailure, "")
	}
	return nil
}
