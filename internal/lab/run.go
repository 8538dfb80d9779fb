package lab

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"redline/internal/atomicfile"
	"redline/internal/target/policy"
	"slices"
	"strconv"
	"sync"
	"time"

	"redline/internal/bench"
	"redline/internal/benchdata"
	"redline/internal/change"
	"redline/internal/host"
	"redline/internal/labdata"
	"redline/internal/secret"
)

// Options configures a lab run.
type Options struct {
	Scenario     labdata.Scenario
	ScenarioFile string
	CommandLine  []string
	Version      string // redline's
	// ResultPath is where the Result is written (atomically) after every
	// measurement; empty keeps it in memory only.
	ResultPath string
	// Tuner applies and rolls back tuned variants; Doctor diagnoses the
	// host and server before the baseline. Either may be nil: a scenario
	// that needs one then fails before measuring anything.
	Tuner  Tuner
	Doctor Diagnoser
	// ServerHost opens the link to the server host of a target of kind
	// ssh; that host's own Tuner and Doctor then replace the two above.
	ServerHost DialServerHost
	// Steerer runs redline steer for variants with steer: {...}; nil
	// refuses them.
	Steerer Steerer
	// AllowHostWide lets the variants make host-wide changes while other
	// redis-servers run on the host (--allow-host-wide; the scenario's
	// host_wide: allow does the same).
	AllowHostWide bool
	// NetnsFallback runs a netns target that cannot be made (no root, no
	// ip, no namespaces) as a managed one, with a one-line note: the
	// default scenario's.
	NetnsFallback bool
	// Observer, if set, is told about progress.
	Observer func(Event)
	// Workers runs one measurement from the scenario's client.workers
	// local load processes or its client.worker_hosts; nil refuses such
	// a scenario.
	Workers func(ctx context.Context, o bench.Options, t bench.Test, data []byte, c labdata.ClientSpec) (*benchdata.Summary, error)
	// TrustScenario runs the scenario's servers as written (any binary,
	// environment and config line); otherwise they are held to the
	// session's rules (trust.go).
	TrustScenario bool
}

// Tuner applies a tuned variant's changes, journaled, and undoes them.
type Tuner interface {
	Apply(ctx context.Context, spec labdata.TuneSpec, env Env) ([]labdata.PlanStep, error)
	Rollback(ctx context.Context, env Env) ([]labdata.PlanStep, error)
}

// Diagnoser runs the doctor against the running server and its host and
// returns the findings and the fixes it considers safe to apply here.
type Diagnoser interface {
	Diagnose(ctx context.Context, env Env) ([]labdata.Finding, Fixes, error)
}

// Fixes are the doctor's fixes it considers safe to apply unattended,
// with its notes on what it left out and why (a tuned variant's plan
// keeps them, as redline tune plan --doctor does).
type Fixes struct {
	Changes []change.Change
	Notes   []string
}

// Env tells tuning and diagnosis which server and namespace they act on.
type Env struct {
	RedisAddr     string
	RedisUser     string
	RedisPassword string
	ServerPID     int
	// ServerNetNS is the server's network namespace ("" for the current
	// one); ClientNetNS the load's.
	ServerNetNS, ClientNetNS string
	// SafeFixes are the doctor's fixes from before the baseline, for
	// TuneSpec.Doctor.
	SafeFixes Fixes
	// Nodes are a cluster target's nodes (host:port), set for a tuned
	// variant: its Redis settings go to every one. Empty for one server.
	Nodes []string
	// HostWideOff tells the Tuner to leave out the host-wide changes
	// (HostWide): other redis-servers run on the host and nobody allowed
	// them.
	HostWideOff bool
}

// Event reports progress.
type Event struct {
	Message  string
	Run      int // runs done, including this one
	Runs     int // runs in all
	Variant  string
	Workload string
	Rep      int
	Summary  *benchdata.Summary // set when a run has finished
	ETA      time.Duration
}

// runBench takes one measurement; a test replaces it to make a run fail.
var runBench = bench.Run

// startProbe starts watching a run's noise and returns the function that
// ends it; a test replaces it to make a run noisy.
var startProbe = func(root string, serverPID int) func() *labdata.Noise {
	return startNoise(root, serverPID).finish // finish handles a nil probe
}

// item is one test of one workload: what a Run measures.
type item struct {
	name  string
	opts  bench.Options
	test  bench.Test
	line  []string // the workload's load line, for the record
	sweep *labdata.SweepPoint
	// toolEnv is the variant's client.env when client.tool runs the load.
	toolEnv []string
}

type labRun struct {
	o         Options
	s         labdata.Scenario
	res       *labdata.Result
	tg        *target
	items     []item
	env       Env
	started   time.Time
	runs      int
	tuned     string // the variant whose changes are applied now
	steer     *steering
	safeFixes Fixes
	smp       *sampling // the per-run samples of the server host (probe.go)
	// hostWideOff: the variants run without their host-wide changes
	// (hostwide.go).
	hostWideOff bool
}

// Execute runs the scenario. It always rolls back what it applied, stops what
// it started and removes the namespaces it made, also on error or when ctx
// is cancelled; the Result then has Complete false and says why.
func Execute(ctx context.Context, o Options) (*labdata.Result, error) {
	l := &labRun{o: o, s: o.Scenario, started: time.Now()}
	l.res = &labdata.Result{Schema: labdata.ResultSchema, Redline: o.Version, CommandLine: o.CommandLine, ScenarioFile: o.ScenarioFile,
		Scenario: redactScenario(o.Scenario), Started: l.started}
	start := l.takeStock()
	runErr := checkBuilt(o.Scenario)
	if runErr == nil {
		runErr = l.run(ctx)
	}
	cleanErr := l.cleanup()
	l.checkStock(start)
	l.diffProfiles()
	l.res.Finished = time.Now()
	l.finalLook(ctx, runErr, cleanErr)
	var err error
	switch {
	case cleanErr != nil: // a failed rollback matters more than anything else
		err = cleanErr
		l.res.Error = cleanErr.Error()
	case ctx.Err() != nil: // what failed after Ctrl-C failed because of it
		err = ctx.Err()
		l.res.Error = "interrupted"
	case runErr != nil:
		err = runErr
		l.res.Error = runErr.Error()
	default:
		l.res.Complete = true
	}
	if serr := l.save(); serr != nil && err == nil {
		err = serr
	}
	return l.res, err
}

// finalLook records why the lab stopped, when the rounds did not say,
// and takes the last look (the one the verdicts are).
func (l *labRun) finalLook(ctx context.Context, errs ...error) {
	q := l.res.Sequential
	if q == nil {
		l.res.Comparisons = comparisons(l.res, l.s)
		return
	}
	switch {
	case ctx.Err() != nil:
		q.Stopped = labdata.StopInterrupted
	case errors.Join(errs...) != nil:
		q.Stopped = labdata.StopFailed
	}
	l.look()
}

func (l *labRun) run(ctx context.Context) error {
	if err := l.check(); err != nil {
		return err
	}
	if err := l.save(); err != nil {
		return err
	}
	l.event(Event{Message: "preparing the target (" + l.s.Target.Kind + ")"})
	// The load comes from another host: the server the lab starts there
	// gets a password of its own, never protected-mode off.
	l.s.Target.Password = policy.Password(l.s.Target.Kind == labdata.KindSSH && l.s.Target.Port == 0, l.s.Target.Password)
	tg, err := l.newTarget(ctx)
	if err != nil {
		return err
	}
	tg.trusted = l.o.TrustScenario
	l.tg = tg
	if err := l.serverHost(ctx); err != nil {
		return err
	}
	if l.o.ResultPath != "" {
		l.tg.logDir = filepath.Dir(l.o.ResultPath)
	}
	if err := l.startNet(ctx); err != nil {
		return err
	}
	if err := l.tg.ensure(ctx, l.s.Server); err != nil {
		return err
	}
	l.res.Target = l.tg.info()
	l.res.Host = hostFacts()
	l.serverHostFacts(ctx)
	l.env = l.envNow(ctx)
	if err := l.diagnose(ctx); err != nil {
		return err
	}
	if l.items, err = expand(l.s, l.tg, l.clientCPUs(nil)); err != nil {
		return err
	}
	for _, v := range l.s.Variants {
		l.res.Variants = append(l.res.Variants, labdata.VariantInfo{Name: v.Name, Baseline: v.Baseline, Description: describe(v), Server: serverDiff(v),
			Build: mergeServer(l.s.Server, v.Server).Built})
	}
	q := design(l.s, len(l.items), connectItems(l.s, l.items))
	l.res.Sequential = q
	l.setupSampling(ctx, q)
	l.res.Planned = planned(q, l.s, l.items)
	l.runs = l.res.Planned.Total
	l.event(Event{Message: describePlan(q, len(l.s.Variants)*len(l.items))})
	if err := l.guardHostWide(ctx, q.MaxRuns); err != nil {
		return err
	}
	return l.rounds(ctx, q)
}

// rounds runs rounds of every variant until the design says stop: every
// interval precise enough at a planned look, the next round would overrun
// the budget (the longest round so far is the estimate), or MaxRuns.
func (l *labRun) rounds(ctx context.Context, q *labdata.Sequential) error {
	var longest time.Duration
	for rep := 1; rep <= q.MaxRuns; rep++ {
		if rep > 1 && q.Budget > 0 && time.Since(l.started)+longest > q.Budget {
			q.Stopped = labdata.StopBudget
			return nil // Execute takes the last look
		}
		start := time.Now()
		for _, vi := range order(len(l.s.Variants), rep, q.Seed) {
			if ctx.Err() != nil {
				return nil
			}
			if err := l.variant(ctx, vi, rep); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		longest = max(longest, time.Since(start))
		q.Rounds = rep
		if rep == q.MaxRuns {
			q.Stopped = labdata.StopMaxRuns
			return nil
		}
		if isLook(q, rep) && precise(l.look(), q.Precision) {
			q.Stopped = labdata.StopPrecise
			return nil
		}
	}
	return nil
}

// look examines the runs taken so far: it records the look and the
// comparisons as they stand.
func (l *labRun) look() []labdata.Comparison {
	q := l.res.Sequential
	if n := len(q.LooksTaken); n == 0 || q.LooksTaken[n-1] != q.Rounds {
		q.LooksTaken = append(q.LooksTaken, q.Rounds)
	}
	l.res.Comparisons = comparisons(l.res, l.s)
	return l.res.Comparisons
}

// check refuses, before touching anything, a scenario that needs tuning or
// diagnosis the caller did not provide.
func (l *labRun) check() error {
	remote := l.s.Target.Kind == labdata.KindSSH
	if !l.o.TrustScenario {
		if err := checkUntrusted(l.s); err != nil {
			return err
		}
	}
	if remote && l.o.ServerHost == nil {
		return fmt.Errorf("target kind ssh, but this lab cannot reach a server host")
	}
	if l.s.Client.LoadWorkers() > 0 && l.o.Workers == nil {
		return fmt.Errorf("client.workers or worker_hosts, but this lab cannot start workers")
	}
	doctorOff := (l.o.Doctor == nil && !remote) || (l.s.Doctor != nil && !*l.s.Doctor)
	for _, v := range l.s.Variants {
		if v.Tune != nil && l.o.Tuner == nil && !remote {
			return fmt.Errorf("variant %s tunes, but no tuner is available", v.Name)
		}
		if v.Steer != nil && l.o.Steerer == nil && !remote {
			return fmt.Errorf("variant %s steers, but steer is not available here", v.Name)
		}
		if v.Tune != nil && v.Tune.Doctor && doctorOff {
			return fmt.Errorf("variant %s applies the doctor's fixes, but the doctor is off (set doctor: true, or drop tune.doctor)", v.Name)
		}
	}
	return nil
}

// order is the order of the variants in round rep: a permutation drawn
// from the lab's seed and the round's number. Drawn at random, no variant
// is favoured by its place in the round (first after a rollback, last
// before one), which is what lets rounds be compared pair by pair; the
// seed is recorded, so the order can be told again.
func order(n, rep int, seed uint64) []int {
	return rand.New(rand.NewPCG(seed, uint64(rep))).Perm(n)
}

// variant runs every workload once under variant vi.
func (l *labRun) variant(ctx context.Context, vi, rep int) error {
	v := l.s.Variants[vi]
	if err := l.tg.ensure(ctx, mergeServer(l.s.Server, v.Server)); err != nil {
		return fmt.Errorf("variant %s: %w", v.Name, err)
	}
	l.env = l.envNow(ctx)
	if v.Tune != nil {
		nodes, err := l.tg.nodes(ctx)
		if err != nil {
			return fmt.Errorf("variant %s: the cluster's nodes: %w", v.Name, err)
		}
		l.env.Nodes = nodes
		l.event(Event{Message: "applying the changes of variant " + v.Name, Variant: v.Name, Rep: rep})
		l.tuned = v.Name
		steps, err := l.o.Tuner.Apply(ctx, *v.Tune, l.env)
		l.recordPlan(vi, steps, rep == 1 || len(l.res.Variants[vi].Plan) == 0)
		if err != nil {
			return fmt.Errorf("variant %s: apply: %w", v.Name, err)
		}
		if v.Tune.Restart {
			if err := l.restart(ctx, mergeServer(l.s.Server, v.Server)); err != nil {
				return fmt.Errorf("variant %s: %w", v.Name, err)
			}
		}
	}
	if err := l.startSteer(ctx, vi, rep); err != nil {
		return err
	}
	cpus := l.clientCPUs(v.Client)
	for _, it := range l.items {
		if ctx.Err() != nil {
			break
		}
		// A restarted server has a new port.
		it.opts.Addr, it.opts.CPUs = l.tg.addr, cpus
		it.opts.Cluster = l.tg.isCluster()
		it.toolEnv = clientEnv(l.s.Client, v.Client)
		if err := l.measure(ctx, it, v.Name, rep); err != nil {
			return err
		}
	}
	if err := l.stopSteer(ctx); err != nil {
		return err
	}
	return l.rollback(ctx)
}

func (l *labRun) recordPlan(vi int, steps []labdata.PlanStep, keep bool) {
	if keep && len(steps) > 0 {
		l.res.Variants[vi].Plan = steps
	}
}

// restart starts the server afresh after a variant's changes, and marks it
// to be restarted again once they are rolled back.
func (l *labRun) restart(ctx context.Context, spec labdata.ServerSpec) error {
	l.event(Event{Message: "restarting the server so it listens with the new settings"})
	l.tg.stale = true
	if err := l.tg.ensure(ctx, spec); err != nil {
		return err
	}
	l.tg.stale = true // the next variant gets a server started after the rollback
	l.env = l.envNow(ctx)
	return nil
}

// rollback undoes the applied variant's changes, if any.
func (l *labRun) rollback(ctx context.Context) error {
	if l.tuned == "" {
		return nil
	}
	name := l.tuned
	l.tuned = ""
	l.event(Event{Message: "rolling back variant " + name, Variant: name})
	// Roll back even when ctx is cancelled: the host must be restored.
	steps, err := l.o.Tuner.Rollback(context.WithoutCancel(ctx), l.env)
	for i := range l.res.Variants {
		if l.res.Variants[i].Name == name {
			l.res.Variants[i].RolledBack = err == nil
			l.res.Variants[i].Notes = appendNotes(l.res.Variants[i].Notes, steps)
		}
	}
	if err != nil {
		return fmt.Errorf("variant %s: rollback: %w (run redline tune rollback to retry)", name, err)
	}
	return nil
}

func appendNotes(notes []string, steps []labdata.PlanStep) []string {
	for _, s := range steps {
		if s.Status != "restored" && s.Note != "" {
			n := fmt.Sprintf("%s: %s", s.Change.Key(), s.Note)
			if !slices.Contains(notes, n) {
				notes = append(notes, n)
			}
		}
	}
	return notes
}

// measure runs one item once and records it; with retry_noisy a run
// flagged as noisy is run once more.
func (l *labRun) measure(ctx context.Context, it item, variant string, rep int) error {
	retried, err := l.measureOnce(ctx, it, variant, rep)
	if err == nil && retried && l.s.RetryNoisy && ctx.Err() == nil {
		l.event(Event{Message: fmt.Sprintf("run %d was noisy (%s): running it again", len(l.res.Runs), l.res.Runs[len(l.res.Runs)-1].Noise.Noisy)})
		l.res.Runs[len(l.res.Runs)-1].Retried = true
		_, err = l.measureOnce(ctx, it, variant, rep)
	}
	return err
}

// load takes one measurement, here or from the scenario's workers
// (then without the per-second series: the workers report no progress).
func (l *labRun) load(ctx context.Context, it item) (*benchdata.Summary, *labdata.LoadTool, error) {
	if l.s.Client.Tool != "" {
		return runTool(ctx, l.s.Client.Tool, it)
	}
	if l.s.Client.LoadWorkers() > 0 {
		sum, err := l.o.Workers(ctx, it.opts, it.test, nil, l.s.Client)
		return sum, nil, err
	}
	sum, err := runBench(ctx, it.opts, it.test, nil)
	return sum, nil, err
}

// measureOnce runs one item once and records it, with its noise and its
// per-second series; it reports whether the run was flagged as noisy.
func (l *labRun) measureOnce(ctx context.Context, it item, variant string, rep int) (bool, error) {
	if err := l.tg.flush(ctx); err != nil {
		return false, fmt.Errorf("FLUSHALL before %s: %w", it.name, err)
	}
	var mu sync.Mutex
	var series []labdata.Second
	it.opts.ProgressInterval = time.Second
	it.opts.Progress = func(p bench.Progress) {
		if !p.Warmup && p.Elapsed > 0 {
			mu.Lock()
			series = append(series, labdata.Second{RPS: p.IntervalRPS, P99: p.IntervalP99})
			mu.Unlock()
		}
	}
	smp := l.startSampling(ctx, variant, it.name, rep)
	cpu0, _ := l.tg.cpuSeconds(ctx)
	finish := startProbe("/", l.localServerPID())
	sum, tool, err := l.load(ctx, it)
	noise := finish()
	cpu1, _ := l.tg.cpuSeconds(context.WithoutCancel(ctx))
	seq := 0
	if sum != nil {
		seq = len(l.res.Runs) + 1
	}
	breakdown, prof := smp.stop(ctx, seq)
	flagged := false
	if sum != nil {
		sum.Label = variant
		h, port := hostPort(l.tg.addr)
		sum.CommandLine = secret.Redact(append(slices.Clone(it.line), "-h", h, "-p", strconv.Itoa(port)))
		if tool != nil {
			sum.CommandLine = secret.Redact(tool.Argv)
		}
		sum.Client = benchdata.LocalClientInfo(l.o.Version)
		sum.Server.Version = l.tg.version
		mu.Lock()
		run := labdata.Run{Seq: seq, Variant: variant, Workload: it.name, Rep: rep, Summary: sum, ServerCPU: cpu1 - cpu0,
			Noise: noise, Series: series, Sweep: it.sweep, Breakdown: breakdown, Profile: prof, Tool: tool}
		mu.Unlock()
		if sum.Requests > 0 {
			run.ServerCPUPerRequest = run.ServerCPU * 1e6 / float64(sum.Requests)
		}
		flagged = noise != nil && noise.Noisy != ""
		l.res.Runs = append(l.res.Runs, run)
		if serr := l.save(); serr != nil {
			return false, serr
		}
		l.event(Event{Run: len(l.res.Runs), Runs: l.runs, Variant: variant, Workload: it.name, Rep: rep, Summary: sum, ETA: l.eta()})
	}
	if errors.Is(err, bench.ErrInterrupted) {
		return false, nil // ctx is cancelled; Execute reports it
	}
	if err != nil {
		return false, fmt.Errorf("%s under %s (repetition %d): %w", it.name, variant, rep, err)
	}
	return flagged, nil
}

// localServerPID is the server's pid when it runs on this host (a managed
// or netns target); an address target's server may be elsewhere, and its
// pid would name some other process here.
func (l *labRun) localServerPID() int {
	if l.s.Target.Kind == labdata.KindAddress || l.tg.host != nil {
		return 0
	}
	return l.env.ServerPID
}

func (l *labRun) eta() time.Duration {
	done := len(l.res.Runs)
	if done == 0 {
		return 0
	}
	elapsed := time.Since(l.started)
	eta := elapsed / time.Duration(done) * time.Duration(l.runs-done)
	if q := l.res.Sequential; q != nil && q.Budget > 0 {
		eta = min(eta, max(q.Budget-elapsed, 0))
	}
	return eta
}

func (l *labRun) diagnose(ctx context.Context) error {
	if l.o.Doctor == nil || (l.s.Doctor != nil && !*l.s.Doctor) {
		return nil
	}
	l.event(Event{Message: "diagnosing the host and the server"})
	f, fixes, err := l.o.Doctor.Diagnose(ctx, l.env)
	if err != nil {
		return fmt.Errorf("doctor: %w", err)
	}
	l.res.Findings, l.safeFixes = f, fixes
	l.env.SafeFixes = fixes
	return nil
}

func (l *labRun) envNow(ctx context.Context) Env {
	return Env{RedisAddr: l.tg.addr, RedisUser: l.s.Target.User, RedisPassword: l.s.Target.Password,
		ServerPID: l.tg.pid(ctx), ServerNetNS: l.tg.serverNS(), ClientNetNS: l.tg.clientNS(), SafeFixes: l.safeFixes,
		HostWideOff: l.hostWideOff}
}

func (l *labRun) clientCPUs(override *labdata.ClientSpec) []int {
	spec := l.s.Client
	if override != nil && override.CPUs != "" {
		spec = *override
	}
	if spec.CPUs == "" {
		return nil
	}
	set, err := host.ParseCPUList(spec.CPUs)
	if err != nil {
		return nil // validated when the scenario was loaded
	}
	return set.CPUs()
}

// cleanup rolls back, stops the server and removes namespaces.
func (l *labRun) cleanup() error {
	err := l.stopSteer(context.Background())
	if l.tuned != "" {
		if rerr := l.rollback(context.Background()); err == nil {
			err = rerr
		}
	}
	if l.tg != nil {
		if cerr := l.tg.close(); cerr != nil && err == nil {
			err = fmt.Errorf("clean up the target: %w", cerr)
		}
		l.res.Target.Logs = l.tg.logs
		if l.tg.host != nil {
			l.res.RemoteCleanup = l.tg.host.Close(context.Background())
		}
	}
	return err
}

func (l *labRun) event(e Event) {
	if l.o.Observer != nil {
		l.o.Observer(e)
	}
}

// save writes the Result atomically.
func (l *labRun) save() error {
	if l.o.ResultPath == "" {
		return nil
	}
	b, err := json.MarshalIndent(l.res, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(l.o.ResultPath, append(b, '\n'), 0); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	return nil
}
