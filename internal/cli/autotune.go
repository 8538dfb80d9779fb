package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"redline/internal/atomicfile"
	"redline/internal/autotune"
	"redline/internal/bench/cmdline"
	"redline/internal/change"
	"redline/internal/knobs"
	"redline/internal/textsafe"
	"redline/internal/tune"
)

func init() { register(newAutotuneCmd) }

// autotuneTarget is what a session measures: journaled with the session,
// so --resume measures the same.
type autotuneTarget struct {
	ServerConfig []string `json:"server_config,omitempty"`
	Workload     string   `json:"workload"`
	Objective    string   `json:"objective"`
	// P99Max bounds the p99 of a throughput objective (--p99-max).
	P99Max time.Duration `json:"p99_max,omitempty"`
	Knobs  []string      `json:"knobs,omitempty"`
	Allow  []string      `json:"allow,omitempty"`
	// AllowHostWide overrides the production-host guard: host-wide
	// knobs are tried beside other redis-servers too.
	AllowHostWide bool `json:"allow_host_wide,omitempty"`
	// Doctor says which knobs the doctor's findings put first (journaled:
	// a resumed session says it too).
	Doctor []string `json:"doctor,omitempty"`
	// The server host: this machine, or a session over ssh (its
	// options, never a password); its journal directory there.
	SSH       string        `json:"ssh,omitempty"`
	SSHConfig string        `json:"ssh_config,omitempty"`
	SSHSudo   bool          `json:"ssh_sudo,omitempty"`
	NoPush    bool          `json:"no_push,omitempty"`
	Heartbeat time.Duration `json:"ssh_heartbeat,omitempty"`
	StateDir  string        `json:"state_dir,omitempty"`
	// An attached server (someone's: never restarted, flushed or
	// stopped), by address or socket; its password comes from the
	// command line each time (PassFile, never journaled, or
	// $REDISCLI_AUTH), on --resume only for an address confirmed there
	// (autotune_resume.go).
	Addr     string `json:"addr,omitempty"`
	Socket   string `json:"socket,omitempty"`
	User     string `json:"user,omitempty"`
	PassFile string `json:"-"`
	// NetNS starts the managed server in a network namespace of its own,
	// the load coming from another (the lab's target kind netns).
	NetNS bool `json:"netns,omitempty"`
	// Builds are server.build's values (--build NAME=SPEC) and, once
	// built, their provenance: --resume builds the same (autotune_build.go).
	Builds []autotuneBuild `json:"builds,omitempty"`
	// Cluster is a Redis Cluster (autotune_cluster.go): with Addr an
	// existing one, else one started here of Primaries primaries with
	// Replicas replicas each.
	Cluster   bool `json:"cluster,omitempty"`
	Primaries int  `json:"primaries,omitempty"`
	Replicas  int  `json:"replicas,omitempty"`
}

type autotuneOptions struct {
	target   autotuneTarget
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
		o.target = autotuneTarget{} // the journal's, not this command line's
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

// writesHost says whether trying k writes the host outside the server:
// a sysctl, a file under /sys, a profile other than the server's own
// settings and threads, steer.
func writesHost(k knobs.Knob) bool {
	switch k.Method() {
	case knobs.ByChange:
		return k.Kind != knobs.KindRedisConfig
	case knobs.ByProfile:
		return k.Target != "redis-config" && k.Target != "numa-bind"
	case knobs.BySteer:
		return true
	}
	return false
}

// autotuneCandidates splits the catalog into the candidates this target
// can try and the knobs it leaves untested, with why.
func autotuneCandidates(t autotuneTarget) (cands []autotune.Candidate, untested []string) {
	for _, k := range knobs.Catalog() {
		if len(t.Knobs) > 0 && !slices.Contains(t.Knobs, k.Name) {
			continue
		}
		var why string
		switch {
		case !k.Allowed(t.Allow) && k.Safety == knobs.Never:
			why = "never tried: " + k.Why
		case !k.Allowed(t.Allow):
			why = "review class (durability, memory, security or host-wide): --allow " + k.Name
		case k.SessionValues() && len(t.Builds) == 0:
			why = "no --build NAME=SPEC given"
		}
		if why != "" {
			untested = append(untested, k.Name+": "+why)
			continue
		}
		values := k.Values
		if k.SessionValues() {
			values = t.buildNames()
		}
		cands = append(cands, autotune.Candidate{Knob: k.Name, Values: values, Numeric: k.Numeric})
	}
	return cands, untested
}

func runAutotune(ctx context.Context, s *streams, o *autotuneOptions) error {
	wl, err := cmdline.ParseWorkload(o.target.Workload)
	if err != nil {
		return usageError("redline autotune: --workload: %v", err)
	}
	if len(wl.Tests) != 1 || wl.Options.Duration <= 0 {
		return usageError("redline autotune: --workload must run one test (-t NAME) for a --duration")
	}
	cands, untested := autotuneCandidates(o.target)
	if len(cands) == 0 {
		return usageError("redline autotune: no knob left to try:\n  %s", strings.Join(untested, "\n  "))
	}
	if err := checkOutputs("autotune", dirOutput("--dir", o.dir)); err != nil {
		return err
	}
	if err := atomicfile.OwnDir(o.dir, 0o700); err != nil {
		return exitCode(ExitError, "redline autotune: "+err.Error())
	}
	tg, err := openAutotuneTarget(ctx, s, o, wl)
	if err != nil {
		return err
	}
	defer tg.close()
	if err := tg.buildServers(ctx, s, o); err != nil {
		return err
	}
	cands, untested = tg.candidates(cands, untested)
	if !o.engine.Resume {
		cands, untested, o.target.Doctor = tg.doctorFirst(ctx, cands, untested)
		o.engine.Candidates = nil
		for _, c := range cands {
			left, why, ok := tg.untried(ctx, c)
			if why != "" {
				untested = append(untested, c.Knob+": "+why)
			}
			if ok {
				o.engine.Candidates = append(o.engine.Candidates, tg.requirement(ctx, left))
			}
		}
		if len(o.engine.Candidates) == 0 {
			return usageError("redline autotune: no knob left to try:\n  %s", strings.Join(untested, "\n  "))
		}
		o.engine.Target, _ = json.Marshal(o.target)
	}
	per := wl.Options.Duration + wl.Options.Warmup + 300*time.Millisecond // apply, FLUSHALL, rollback
	if !o.engine.Resume {                                                 // a resumed session keeps its own budget
		o.engine.MaxMeasurements = int(o.budget / per)
	}
	plan, err := o.engine.Plan() // the budget decides the default --max-rounds
	if err != nil {
		return usageError("redline autotune: %v", err)
	}
	autotunePrintPlan(s.out, o, plan, per)
	tg.printBuildTime(s.out)
	fmt.Fprintf(s.out, "target: %s; after a crash: %s\n", tg.where, o.rollbackHint())
	fmt.Fprintf(s.out, "host-wide: %s\n", tg.guardLine)
	for _, l := range o.target.Doctor {
		fmt.Fprintf(s.out, "doctor: %s\n", textsafe.Printable(l)) // a resumed journal's lines too
	}
	o.engine.Progress = func(t autotune.Trial) { autotunePrintTrial(s.out, t) }
	res, runErr := autotune.Run(ctx, tg, o.engine)
	if res == nil {
		return exitCode(ExitError, "redline autotune: "+runErr.Error())
	}
	err = autotuneFinish(s, o, res, untested, tg.addr, tg.clusterNodes(), runErr)
	if o.apply && runErr == nil && ctx.Err() == nil {
		if aerr := autotuneApply(ctx, s.out, tg, res, o.rollbackHint()); aerr != nil && err == nil {
			err = exitCode(ExitFailure, "redline autotune: "+aerr.Error())
		}
	}
	if ctx.Err() != nil {
		return exitCode(ExitSignaled, "redline autotune: stopped; the host is rolled back, the partial report is in "+o.dir+" (--resume "+o.dir+" continues)")
	}
	return err
}

// autotuneFinish writes the files and prints the answer.
func autotuneFinish(s *streams, o *autotuneOptions, res *autotune.Result, untested []string, addr string, nodes []string, runErr error) error {
	var errs []error
	errs = append(errs, atomicfile.Write(filepath.Join(o.dir, "result.json"), autotuneResultJSON(res, o.target.Builds), 0o644))
	errs = append(errs, writeAutotuneReports(o.dir, autotuneReport(o, res, untested)))
	planPath := ""
	if c := res.Confirmation; c != nil && c.Confirmed {
		planPath = filepath.Join(o.dir, "plan.yaml")
		errs = append(errs, writeAutotunePlan(planPath, res, addr, nodes, o.target.Builds))
	}
	autotunePrintAnswer(s.out, o, res, untested, planPath)
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

// writeAutotunePlan writes the confirmed plan for redline tune apply,
// each change's measured effect in its note; a cluster's Redis settings
// name each of its nodes.
func writeAutotunePlan(path string, res *autotune.Result, addr string, nodes []string, builds []autotuneBuild) error {
	changes, notes, err := splitPlan(res.Final)
	if err != nil {
		return err
	}
	p := tune.FromChanges(changes, "autotune")
	p.Notes = append(p.Notes, notes...)
	p.Notes = append(p.Notes, buildNotes(res.Final, builds)...)
	p.Redis = &tune.PlanRedis{Addr: addr}
	p.ForNodes(nodes)
	// Each change's note is the trial that kept its knob: found by the
	// knob, not by position (profiles and start-up settings make no
	// change here; a cluster's setting is one change per node).
	comments := map[int]string{}
	for i, ch := range p.Changes {
		if t := keptTrialOf(res, ch); t != nil {
			comments[i] = fmt.Sprintf("measured: x%.3f [%.3f, %.3f] against %s (trial %d)", t.Result.Ratio, t.Result.CILow, t.Result.CIHigh, t.Against, t.N)
		}
	}
	c := res.Confirmation.Result
	header := fmt.Sprintf("redline autotune: confirmed on %d fresh rounds: x%.3f [%.3f, %.3f] at %.0f%%\nthe server address is the session's managed one: edit redis.addr for yours", c.N, c.Ratio, c.CILow, c.CIHigh, 100*(1-c.Level))
	var buf strings.Builder
	if err := p.EncodeYAML(&buf, header, comments); err != nil {
		return err
	}
	return atomicfile.Write(path, []byte(buf.String()), 0o644)
}

// keptTrialOf is the trial that kept the final setting making ch.
func keptTrialOf(res *autotune.Result, ch change.Change) *autotune.Trial {
	k, ok := knobs.ForChange(ch)
	for _, s := range res.Final {
		if ok && s.Knob == k.Name {
			return keptTrial(res, s)
		}
	}
	return nil
}

// keptTrial is the trial that kept s.
func keptTrial(res *autotune.Result, s autotune.Setting) *autotune.Trial {
	for i := len(res.Trials) - 1; i >= 0; i-- {
		if t := &res.Trials[i]; t.Decision == autotune.Kept && t.Setting == s {
			return t
		}
	}
	return nil
}
