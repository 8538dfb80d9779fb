package target

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"redline/internal/autotune"
	"redline/internal/bench/cmdline"
	"redline/internal/serverhost"
)

// Options are one autotune session's, as the command line (or the
// journal, on --resume) gives them: they go down once, into Autotune, and
// what the session did comes back as an Outcome.
type Options struct {
	Spec Spec
	// Password is the attached server's (or cluster seed's): never
	// journaled or printed.
	Password string
	// ClusterAuthAny sends the seed's password to every node it lists
	// (--cluster-auth-any).
	ClusterAuthAny bool
	// StateDir is the tune journal of the trials ("" with --ssh: the
	// server host's default).
	StateDir string
	// Engine is the search's options (its Dir, Seed, rounds, on --resume
	// the journal's candidates); Autotune fills in the rest.
	Engine autotune.Options
	// Budget bounds the measurements of a new session.
	Budget time.Duration
	// Apply leaves a confirmed plan applied (--apply); Undo is the
	// command that restores it, said with it.
	Apply bool
	Undo  string
	// OpenHost opens the server host with the target's local options
	// (the caller's one way to open a host: this machine or --ssh); nil
	// opens this machine.
	OpenHost func(ctx context.Context, local serverhost.LocalOptions) (serverhost.Host, error)
	// Prepare runs once the spec is checked and before anything starts
	// (the caller makes the session's directory); an error stops there.
	Prepare func() error
	// BuildProgress takes a build's output; Say a line as it happens;
	// Ready what the session is about to do; Progress each trial.
	BuildProgress io.Writer
	Say           func(string)
	Ready         func(Ready)
	Progress      func(autotune.Trial)
}

func (o Options) openHost(ctx context.Context, local serverhost.LocalOptions) (serverhost.Host, error) {
	if o.OpenHost != nil {
		return o.OpenHost(ctx, local)
	}
	return serverhost.Open(ctx, serverhost.OpenOptions{Local: local})
}

// Ready is what a session is about to do, before its first measurement.
type Ready struct {
	Plan autotune.Plan
	// Per is the estimate of one measurement (the workload, its warmup,
	// apply, FLUSHALL and rollback); MaxMeasurements the budget's.
	Per             time.Duration
	MaxMeasurements int
	Where           string // what the target is
	Guard           string // the production-host guard's decision
	Doctor          []string
	// Builds took BuildTime before the first measurement, Cached of them
	// from the cache.
	Builds    int
	BuildTime time.Duration
	Cached    []string
}

// Outcome is what a session did.
type Outcome struct {
	// Spec is the session's, with the doctor's lines and the builds'
	// provenance.
	Spec     Spec
	Result   *autotune.Result
	Untested []string
	// Addr and Nodes are the baseline server's address and a cluster's
	// nodes (plan.yaml names them).
	Addr  string
	Nodes []string
	// Applied says what --apply did; ApplyErr why it failed.
	Applied  []string
	ApplyErr error
}

// Fault says whose a failed session's error is.
type Fault int

// The faults.
const (
	// Usage: bad input, or the target could not be opened (exit 2).
	Usage Fault = iota
	// Failure: the session ran and failed (exit 1).
	Failure
)

// Error is a session's error that says whose it is.
type Error struct {
	Fault Fault
	Err   error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func usage(format string, args ...any) error {
	return &Error{Fault: Usage, Err: fmt.Errorf(format, args...)}
}

// Autotune runs one session: it checks the spec, opens the target, builds
// the --build specs, puts the doctor's knobs first and drops what the
// target cannot try, runs the search (autotune.Run) over the target,
// applies a confirmed plan with Apply, and closes the target (every trial
// rolled back, the servers it started stopped). The outcome is nil only
// when the session could not start; with an outcome, err is the search's.
func Autotune(ctx context.Context, o Options) (*Outcome, error) {
	wl, err := cmdline.ParseWorkload(o.Spec.Workload)
	if err != nil {
		return nil, usage("--workload: %v", err)
	}
	if len(wl.Tests) != 1 || wl.Options.Duration <= 0 {
		return nil, usage("--workload must run one test (-t NAME) for a --duration")
	}
	cands, untested := Candidates(o.Spec)
	if len(cands) == 0 {
		return nil, usage("no knob left to try:\n  %s", strings.Join(untested, "\n  "))
	}
	if o.Prepare != nil {
		if err := o.Prepare(); err != nil {
			return nil, err
		}
	}
	say := func(string) {}
	if o.Say != nil {
		say = o.Say
	}
	tg, err := Open(ctx, o, wl)
	if err != nil {
		return nil, err
	}
	defer tg.Close()
	spec, eng := o.Spec, o.Engine
	spec.Builds = slices.Clone(spec.Builds)
	if err := tg.buildServers(ctx, &spec, say); err != nil {
		return nil, err
	}
	cands, untested = tg.candidates(cands, untested)
	if !eng.Resume {
		cands, untested, spec.Doctor = tg.doctorFirst(ctx, cands, untested)
		eng.Candidates = nil
		for _, c := range cands {
			left, why, ok := tg.untried(ctx, c)
			if why != "" {
				untested = append(untested, c.Knob+": "+why)
			}
			if ok {
				eng.Candidates = append(eng.Candidates, tg.requirement(ctx, left))
			}
		}
		if len(eng.Candidates) == 0 {
			return nil, usage("no knob left to try:\n  %s", strings.Join(untested, "\n  "))
		}
		eng.Target, _ = json.Marshal(spec)
	}
	per := wl.Options.Duration + wl.Options.Warmup + 300*time.Millisecond // apply, FLUSHALL, rollback
	if !eng.Resume {                                                      // a resumed session keeps its own budget
		eng.MaxMeasurements = int(o.Budget / per)
	}
	plan, err := eng.Plan() // the budget decides the default --max-rounds
	if err != nil {
		return nil, usage("%v", err)
	}
	if o.Ready != nil {
		o.Ready(tg.ready(plan, per, eng.MaxMeasurements, spec.Doctor))
	}
	eng.Progress = o.Progress
	res, runErr := autotune.Run(ctx, tg, eng)
	if res == nil {
		return nil, &Error{Fault: Usage, Err: runErr}
	}
	out := &Outcome{Spec: spec, Result: res, Untested: untested, Addr: tg.addr, Nodes: tg.cluster.nodeList()}
	if o.Apply && runErr == nil && ctx.Err() == nil {
		out.Applied, out.ApplyErr = tg.apply(ctx, res, o.Undo)
	}
	return out, runErr
}

// ready is what the session is about to do.
func (t *Target) ready(plan autotune.Plan, per time.Duration, max int, doctor []string) Ready {
	r := Ready{Plan: plan, Per: per, MaxMeasurements: max, Where: t.where, Guard: t.guardLine, Doctor: doctor,
		Builds: len(t.built), BuildTime: t.buildTime}
	for name, p := range t.built {
		if p.Cached {
			r.Cached = append(r.Cached, name)
		}
	}
	slices.Sort(r.Cached)
	return r
}
