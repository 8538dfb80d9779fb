package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"redline/internal/atomicfile"
	"redline/internal/lab"
	"redline/internal/labdata"
	"redline/internal/redisbuild"
	"redline/internal/remote"
	"redline/internal/secret"
	"redline/internal/serverhost"
	"redline/internal/target/labhost"
	"redline/internal/textsafe"
)

func init() { register(newLabCmd) }

type labFlags struct {
	out      string
	reps     int
	repsSet  bool
	budget   time.Duration
	stateDir string
	progress string
	noDoctor bool
	// sshConfig is an ssh_config file for a target of kind ssh (ssh -F).
	sshConfig string
	profile   bool
	// passFile is the target's password file, given here (anywhere)
	// rather than by the scenario (below its directory only).
	passFile string
	// trust runs the scenario's servers as written, after printing them.
	trust bool
	// allowHostWide lets the variants make host-wide changes while
	// other redis-servers run on this host.
	allowHostWide bool
}

func newLabCmd(s *streams) *cobra.Command {
	f := &labFlags{}
	cmd := &cobra.Command{
		Use:   "lab [scenario.yaml]",
		Short: "run a before/after experiment: baseline, tuned variants, repetitions, rollback, report",
		Long: `lab runs the whole experiment that tuning guides do by hand: it starts (or reaches) a
redis-server, diagnoses the host and the server, measures a baseline, applies each variant
(journaled tune changes, server settings such as io-threads or an allocator, CPU layouts),
re-measures in interleaved rounds until every comparison is precise enough or the time
budget is spent, tells a real gain from noise with exact rank intervals at a stated
per-lab false-positive rate, always rolls back, and writes the results and a report.
Every run records where the server host's time went (per CPU, NIC queue interrupts, softnet,
the server's threads running, waiting for a CPU or asleep); --profile adds a perf CPU profile
of one repetition of every variant, compared with the baseline's.

With target kind ssh the server host is another machine: the lab runs the load from here and
does everything server-side there through a redline session over your ssh (docs/remote.md).

Without a scenario file it runs the default scenario: a redis-server it starts in a network
namespace of its own (on loopback where none can be made), the doctor, a baseline, the doctor's
safe fixes, and the server and the load generator on separate CPUs. Before the first change it
lists the host-wide changes the variants make; while other redis-servers run on this host it
leaves them out unless --allow-host-wide (or host_wide: allow) says otherwise, and it ends with
"host restored" or what differs. See docs/lab.md for the scenario format.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.repsSet = cmd.Flags().Changed("repetitions")
			return runLab(cmd.Context(), s, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.out, "output", "o", "", "`DIR`ectory for results and reports (default ./redline-lab-TIMESTAMP)")
	alias(fl, "out", "output")
	fl.IntVar(&f.reps, "repetitions", 0, "run exactly this many rounds (instead of the scenario's min_runs..max_runs)")
	fl.DurationVar(&f.budget, "budget", 0, "time budget of an adaptive lab (default: the scenario's)")
	fl.StringVar(&f.stateDir, "state-dir", "", "tune journal directory (default /var/lib/redline)")
	fl.StringVar(&f.progress, "progress", "auto", "progress display: auto, tty, plain, none")
	fl.BoolVar(&f.noDoctor, "no-doctor", false, "skip the doctor (and so the doctor's fixes)")
	fl.StringVar(&f.sshConfig, "ssh-config", "", "with a target of kind ssh: this ssh_config `FILE` instead of yours (ssh -F)")
	fl.BoolVar(&f.trust, "trust-scenario", false, "run the scenario's server binary, env and config lines as written (printed first); without it they are held to the session's rules")
	fl.StringVar(&f.passFile, "pass-file", "", "the target server's password: the first line of `FILE` (instead of the scenario's password or password_file)")
	fl.BoolVar(&f.profile, "profile", false, "CPU-profile the server (perf record -g) in one repetition of every variant: top functions and flame graphs in the report (scenario profile: true)")
	fl.BoolVar(&f.allowHostWide, "allow-host-wide", false, "make the variants' host-wide changes (sysctls outside the server's network namespace, THP, IRQ affinities, CPU frequency) even while other redis-servers run on this host (scenario host_wide: allow)")
	return cmd
}

func runLab(ctx context.Context, s *streams, f *labFlags, args []string) error {
	if err := checkProgress("lab", f.progress); err != nil {
		return err
	}
	sc := lab.DefaultScenario()
	file := ""
	if len(args) == 1 {
		file = args[0]
		var err error
		if sc, err = lab.LoadScenario(file); err != nil {
			return exitCode(ExitError, "redline lab: "+err.Error())
		}
	}
	if err := labPassword(&sc, file, f.passFile, s.err); err != nil {
		return exitCode(ExitError, "redline lab: "+err.Error())
	}
	if f.repsSet {
		// A flag is checked like the scenario field it overrides. Exactly
		// this many rounds: no adaptive bounds, and no budget unless
		// --budget gives one.
		if f.reps < 1 {
			return usageError("redline lab: --repetitions %d: want at least 1", f.reps)
		}
		sc.Repetitions, sc.MinRuns, sc.MaxRuns, sc.Budget = f.reps, 0, 0, 0
		if err := lab.Validate(&sc); err != nil {
			return usageError("redline lab: --repetitions %d: %v", f.reps, err)
		}
	}
	if f.budget < 0 {
		return usageError("redline lab: --budget %s: want a positive duration", f.budget)
	}
	if f.budget > 0 {
		sc.Budget = f.budget
	}
	if f.noDoctor {
		no := false
		sc.Doctor = &no
		for i := range sc.Variants {
			if t := sc.Variants[i].Tune; t != nil {
				t.Doctor = false
			}
		}
	}
	if f.profile {
		sc.Profile = true
	}
	out := f.out
	if out == "" {
		out = "redline-lab-" + time.Now().Format("20060102-150405")
	}
	if err := checkOutputs("lab", dirOutput("-o", out)); err != nil {
		return err
	}
	if err := atomicfile.OwnDir(out, 0o755); err != nil {
		return exitCode(ExitError, fmt.Sprintf("redline lab: %v", err))
	}
	resultPath := filepath.Join(out, "result.json")
	// Builds first (cached): minutes of compiling, before any server starts.
	build, endBuild := labhost.Builder(labHostOptions(s, f), sc.Target)
	err := lab.BuildServers(ctx, &sc, build, f.trust)
	if endBuild(); err != nil {
		if errors.As(err, new(redisbuild.SpecError)) {
			return usageError("redline lab: %v", err)
		}
		return exitCode(ExitFailure, "redline lab: "+err.Error())
	}
	lh, err := openLabHost(s, f, sc)
	if err != nil {
		return exitCode(ExitError, "redline lab: "+err.Error())
	}
	defer lh.Close()
	if f.trust {
		printTrusted(s.err, sc)
	}
	p := newLabProgress(s, f.progress)
	fmt.Fprintf(s.err, "redline lab: scenario %s, results in %s\n", sc.Name, resultPath)
	load := &labLoad{s: s, f: f}
	res, err := lab.Execute(ctx, lab.Options{Scenario: sc, ScenarioFile: file, CommandLine: s.argv, Version: Version(),
		ResultPath: resultPath, Tuner: lh.Tuner, Doctor: lh.Doctor, ServerHost: lh.ServerHost, Steerer: lh.Steerer, Observer: p.event,
		Workers: load.run, TrustScenario: f.trust, AllowHostWide: f.allowHostWide, NetnsFallback: file == ""})
	load.close()
	// Stopped during the run, not by a closed stdout while printing below.
	interrupted := errors.Is(err, context.Canceled) || ctx.Err() != nil
	p.done()
	reports, rerr := writeLabReports(out, res)
	printVerdicts(s.out, res)
	printRemoteCleanup(s.err, res)
	for _, r := range reports {
		fmt.Fprintf(s.out, "report: %s\n", r)
	}
	if res.HostCheck != "" { // the last word: the host as found, or not
		fmt.Fprintln(s.out, res.HostCheck)
	}
	switch {
	case interrupted:
		return exitCode(ExitSignaled, fmt.Sprintf("redline lab: interrupted; everything was rolled back; partial results in %s", resultPath))
	case err != nil:
		return exitCode(ExitFailure, fmt.Sprintf("redline lab: %v\n(what was measured is in %s)", err, resultPath))
	case rerr != nil:
		return exitCode(ExitFailure, "redline lab: report: "+rerr.Error())
	}
	return nil
}

// labPassword reads the target's password: --pass-file (the command
// line's, anywhere), else the scenario's password or its password_file
// (below the scenario's directory only: secret.ReadFileBeneath). An
// existing server with none gets $REDISCLI_AUTH only as
// secret.Given.ForFileAddress decides (a loopback listener of root's or
// the invoking user's): the scenario is someone's file, and the address
// may be theirs; why it was withheld goes to warn.
func labPassword(sc *labdata.Scenario, file, passFile string, warn io.Writer) error {
	t := &sc.Target
	if passFile != "" {
		pw, err := secret.ReadFile(passFile)
		if err != nil {
			return fmt.Errorf("--pass-file: %w", err)
		}
		t.Password, t.PasswordFile = pw, ""
		return nil
	}
	if t.Password != "" {
		return nil
	}
	if t.PasswordFile != "" {
		dir := "."
		if file != "" {
			dir = filepath.Dir(file)
		}
		pw, err := secret.ReadFileBeneath(dir, t.PasswordFile)
		if err != nil {
			return fmt.Errorf("target.password_file: %w", err)
		}
		t.Password = pw
		return nil
	}
	if t.Kind == labdata.KindAddress {
		pw, withheld := secret.Given{Value: secret.FromEnv()}.ForFileAddress("tcp", t.Address)
		if withheld != "" {
			fmt.Fprintf(warn, "redline lab: %s\n", textsafe.Printable(withheld))
		}
		t.Password = pw
	}
	return nil
}

// printTrusted says what a trusted scenario's servers will run, before
// anything does.
func printTrusted(w io.Writer, sc labdata.Scenario) {
	labels, specs := lab.ServerSpecs(sc)
	for i, spec := range specs {
		bin := spec.Binary
		if bin == "" {
			bin = "redis-server (from PATH)"
		}
		fmt.Fprintf(w, "redline lab: --trust-scenario: %s runs %s\n", labels[i], textsafe.Printable(bin))
		for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
			fmt.Fprintf(w, "redline lab: --trust-scenario: %s env %s=%s\n", labels[i], textsafe.Printable(k), textsafe.Printable(spec.Env[k]))
		}
		for _, line := range spec.Config {
			fmt.Fprintf(w, "redline lab: --trust-scenario: %s config %s\n", labels[i], textsafe.Printable(secret.RedactLine(line)))
		}
	}
}

// labProgress shows the lab's progress with an ETA: one rewritten line on
// a terminal, plain lines otherwise.
type labProgress struct {
	mu   sync.Mutex
	s    *streams
	tty  bool
	none bool
	line bool
}

func newLabProgress(s *streams, mode string) *labProgress {
	p := &labProgress{s: s}
	switch mode {
	case "none":
		p.none = true
	case "tty":
		p.tty = true
	case "auto":
		p.tty = isTerminal(s.err)
	}
	return p
}

func (p *labProgress) event(e lab.Event) {
	if p.none {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var msg string
	if e.Summary == nil {
		msg = e.Message
	} else {
		msg = fmt.Sprintf("[%d/%d] %s %s rep %d: %.0f rps, p99 %.3f ms; ETA %s",
			e.Run, e.Runs, e.Variant, e.Workload, e.Rep, e.Summary.RPS, e.Summary.Latency.P99, e.ETA.Round(time.Second))
	}
	if p.tty && !strings.Contains(msg, "\n") { // a block stays on screen
		fmt.Fprintf(p.s.err, "\r\033[K%s", msg)
		p.line = true
		return
	}
	if p.line {
		fmt.Fprint(p.s.err, "\r\033[K")
		p.line = false
	}
	fmt.Fprintln(p.s.err, msg)
}

func (p *labProgress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.line {
		fmt.Fprint(p.s.err, "\r\033[K")
	}
}

// labHostOptions are the command line's options of the lab's host
// (internal/target/labhost), its notices printed here.
func labHostOptions(s *streams, f *labFlags) labhost.Options {
	return labhost.Options{StateDir: f.stateDir, SSHConfig: f.sshConfig, Version: Version(), BuildProgress: s.err,
		Notify:   func(msg string) { fmt.Fprintf(s.err, "redline lab: %s\n", msg) },
		Cleanups: func(host string, cls []remote.Cleanup) { printCleanups(s.err, "lab", host, cls) },
		Closed:   func(h serverhost.Host) { closeHost(s, "lab", h) }}
}

// openLabHost opens the host the lab's target runs on (labhost.Open).
func openLabHost(s *streams, f *labFlags, sc labdata.Scenario) (*labhost.Host, error) {
	return labhost.Open(labHostOptions(s, f), sc)
}
