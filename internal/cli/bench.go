package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"redline/internal/bench"
	"redline/internal/bench/cmdline"
	"redline/internal/benchdata"
	"redline/internal/resp"
	"redline/internal/secret"
)

func init() { register(newBenchCmd) }

func newBenchCmd(s *streams) *cobra.Command {
	var f *cmdline.Flags
	var sshw sshWorkerFlags
	cmd := &cobra.Command{
		Use:   "bench [options] [command args...]",
		Short: "redis-benchmark-compatible load generator (same flags and output), faster and more accurate",
		Long: `bench accepts redis-benchmark's command lines unchanged and prints what redis-benchmark
prints (the report block, -q lines, --csv), from a load generator that costs less client CPU
and measures each request's own latency (not a pipeline batch's time to first byte).

Beyond redis-benchmark: --duration and --warmup; --rate for fixed-rate open-loop load with
latency timed from each request's intended send time (coordinated omission corrected);
-o FILE saves JSON with the full HDR histogram; --hdr-out; --ratio SET:GET; --key-dist uniform|gaussian|
zipf|sequential; value sizes as ranges or weighted lists; --cluster routes by slot with per-node results;
--workers N merges N load processes exactly (--workers ssh:HOST,... one on each host, through
a redline session there); --connect-rate for connection churn.
Connection set-up is measured on its own, with the kernel's listen-queue and local-port counters
when the server's host is readable. Errors end the run with a message,
partial results and a non-zero exit, never a hang.`,
		Example: `  redline bench -t set,get -c 32 -n 500000 -r 500000 --threads 6 -q --csv -h 10.0.0.5
  redline bench -h 10.0.0.5 -p 6379 -n 1000000 -c 5000 -q
  redline bench -t set -c 40 -d 3000 -r 100000 --duration 30s --warmup 5s -o set.json
  redline bench --rate 50000 --duration 20s -t get -r 100000
  redline bench --ratio 1:10 -r 100000 --key-dist zipf -n 1000000
  redline bench -r 10000 -n 10000 lpush mylist __rand_int__
  redline bench --cluster -h 10.0.0.5 -p 7000 -t set,get -r 1000000 -q     # a Redis Cluster through a seed
  redline bench --workers 4 -c 200 -n 2000000 -t set -r 1000000 -o set.json  # 4 load processes, merged exactly
  redline bench --workers ssh:load1,load2 -h 10.0.0.5 -c 200 -t get         # load from two hosts`,
		Args:              cobra.ArbitraryArgs,
		DisableAutoGenTag: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBench(cmd.Context(), s, f, &sshw, args)
		},
	}
	fl := cmd.Flags()
	fl.SetInterspersed(false) // the first non-option starts the custom command
	f = cmdline.New(fl)
	f.PasswordEnv = secret.FromEnv()
	renamed(fl, "password", "pass")
	renamed(fl, "json", "output")
	sshw.define(fl)
	return cmd
}

func runBench(ctx context.Context, s *streams, f *cmdline.Flags, sshw *sshWorkerFlags, args []string) error {
	if f.Version {
		fmt.Fprintf(s.out, "redline bench %s (redis-benchmark 7.2 compatible)\n", Version())
		return nil
	}
	if f.ShowErrors {
		fmt.Fprintln(s.err, "WARNING: -e option has no effect. We now immediately exit on error to avoid false results.")
	}
	if err := checkProgress("bench", f.Progress); err != nil {
		return err
	}
	o, err := f.Options()
	if err != nil {
		return usageError("redline bench: %v", err)
	}
	hdr := output{flag: "--hdr-out", path: f.HdrOut}
	if f.HdrOut != "" {
		hdr.probe = bench.HgrmPath(f.HdrOut, "test")
	}
	if err := checkOutputs("bench", fileOutput("-o", f.JSONOut), hdr); err != nil {
		return err
	}
	if err := checkWorkers(f.Workers, o, f.Idle, len(f.WorkerHosts) > 0); err != nil {
		return usageError("redline bench: %v", err)
	}
	if err := checkSSHWorkers(f.WorkerHosts, sshw, o, f.HostSet()); err != nil {
		return usageError("redline bench: %v", err)
	}
	if f.Idle {
		return runIdle(ctx, s, o)
	}
	tests, warnings, err := f.Tests(args, s.in)
	for _, w := range warnings {
		fmt.Fprintln(s.err, w)
	}
	if err != nil {
		return usageError("redline bench: %v", err)
	}
	if !o.KeepAlive {
		fmt.Fprintln(s.err, "WARNING: keepalive disabled, you probably need 'echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse' for Linux in order to use a lot of clients/requests")
	}
	r := &benchRun{s: s, f: f, o: o, argv: s.argv, custom: len(args) > 0}
	info, err := bench.FetchServerInfo(ctx, o)
	switch {
	case err != nil && ctx.Err() != nil:
		return r.stoppedEarly(ctx, tests[0], "reading the server's INFO", err)
	case err != nil && len(f.WorkerHosts) > 0 && !errors.Is(err, bench.ErrAuth):
		// The load comes from the ssh workers, which may reach a server
		// this host cannot: its facts are left out, the run goes on.
		fmt.Fprintf(s.err, "redline bench: warning: this host could not read the server's INFO and CONFIG (%s); the workers on %s send the load, and the result records no server facts\n", err, strings.Join(f.WorkerHosts, ","))
	case err != nil:
		return exitCode(ExitFailure, err.Error())
	}
	if info.ConfigErr != "" {
		fmt.Fprintf(s.err, "WARNING: Could not fetch server CONFIG: %s\n", info.ConfigErr)
	}
	r.info = info
	if f.Workers > 1 || len(f.WorkerHosts) > 0 {
		if r.workers, err = workerSessions(ctx, s, f.WorkerHosts, f.Workers, sshw); err != nil {
			if ctx.Err() != nil {
				return r.stoppedEarly(ctx, tests[0], "starting the workers", err)
			}
			return exitCode(ExitError, "redline bench: "+err.Error())
		}
		defer r.workers.close()
	}
	r.progress = newProgressPrinter(s, f)
	r.o.Progress = r.progress.show
	r.o.ProgressInterval = r.progress.interval()
	r.o.ProgressFinal = r.progress.mode == "plain"
	return r.run(ctx, tests)
}

// benchRun prints and saves the results of a sequence of tests.
type benchRun struct {
	s        *streams
	f        *cmdline.Flags
	o        bench.Options
	info     benchdata.ServerInfo
	argv     []string
	progress *progressPrinter
	workers  *workerPool // --workers
	results  []*benchdata.Summary
	started  time.Time
	custom   bool // a command given on the command line, not -t tests
}

func (r *benchRun) run(ctx context.Context, tests []bench.Test) error {
	r.started = time.Now()
	if r.f.CSV {
		io.WriteString(r.s.out, bench.CSVHeader)
	}
	payload := bench.NewPayload()
	for {
		data := payload.Next(r.o.Sizes.Largest())
		for _, t := range tests {
			if ctx.Err() != nil && len(r.results) == 0 {
				return r.stoppedEarly(ctx, t, "starting", context.Cause(ctx))
			}
			if ctx.Err() != nil { // stopped between two tests: the ones done are printed and saved
				return exitCode(ExitSignaled, fmt.Sprintf("redline bench: stopped by %s before %s, with %d tests done", stoppedWhat(ctx), t.Title, len(r.results)))
			}
			if err := r.one(ctx, t, data); err != nil {
				return err
			}
		}
		if !r.f.CSV && !r.custom {
			fmt.Fprintln(r.s.out)
		}
		if !r.f.Loop || ctx.Err() != nil {
			return nil
		}
	}
}

// one runs a test, prints it and saves the JSON so far. The report is
// printed before the save, so a save that fails loses no figure on the
// terminal; its error then ends the run.
func (r *benchRun) one(ctx context.Context, t bench.Test, data []byte) error {
	r.progress.begin(t.Title)
	sum, err := r.measure(ctx, t, data)
	r.progress.end()
	if sum == nil {
		if err == nil {
			err = errors.New("no result")
		}
		if ctx.Err() != nil {
			return r.stoppedEarly(ctx, t, "connecting", err)
		}
		return exitCode(ExitFailure, err.Error())
	}
	r.keep(sum, t)
	interrupted := errors.Is(err, bench.ErrInterrupted)
	if err == nil || interrupted {
		r.print(sum)
	}
	werr := r.save(sum)
	switch {
	case werr != nil:
		msg := fmt.Sprintf("redline bench: the results were not saved: %v", werr)
		if interrupted || ctx.Err() != nil {
			return exitCode(ExitSignaled, msg)
		}
		return exitCode(ExitFailure, msg)
	case interrupted:
		return exitCode(ExitSignaled, fmt.Sprintf("interrupted: the results above cover the %d requests measured before %s", sum.Requests, stoppedWhat(ctx)))
	case err != nil:
		msg := err.Error()
		if sum.Requests > 0 {
			msg += fmt.Sprintf("\n(%d requests were measured before the error", sum.Requests)
			if r.f.JSONOut != "" {
				msg += "; partial results saved in " + r.f.JSONOut
			}
			msg += ")"
		}
		return exitCode(ExitFailure, msg)
	}
	return nil
}

// keep fills in what the run knows of sum (server, client, command line)
// and adds it to the results saved.
func (r *benchRun) keep(sum *benchdata.Summary, t bench.Test) {
	sum.Server = r.info
	sum.Client = benchdata.LocalClientInfo(Version())
	sum.CommandLine = r.argv
	if r.custom {
		sum.Config.PayloadBytes = len(resp.AppendCommand(nil, t.Args...))
	}
	r.results = append(r.results, sum)
}

// stoppedEarly ends a run stopped before t measured anything, while it
// was doing during (cause: the error that step returned): the report of
// t's 0 requests is printed and saved all the same (bench.Unmeasured),
// so every stopped run leaves what it has on the terminal and in -o, and
// says why it is empty. (A stop during a test that measured something
// ends in one, with that partial result.)
func (r *benchRun) stoppedEarly(ctx context.Context, t bench.Test, during string, cause error) error {
	if r.started.IsZero() {
		r.started = time.Now()
	}
	sum := bench.Unmeasured(r.o, t, during)
	r.keep(sum, t)
	r.print(sum)
	msg := fmt.Sprintf("redline bench: %s: 0 requests measured: stopped by %s while %s", t.Title, stoppedWhat(ctx), during)
	if cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.Cause(ctx)) {
		msg += fmt.Sprintf(" (%v)", cause)
	}
	if werr := r.save(sum); werr != nil {
		msg += fmt.Sprintf("\nredline bench: the results were not saved: %v", werr)
	} else if r.f.JSONOut != "" {
		msg += "; the empty result is saved in " + r.f.JSONOut
	}
	return exitCode(ExitSignaled, msg)
}

// measure runs t here, or in the --workers sessions.
func (r *benchRun) measure(ctx context.Context, t bench.Test, data []byte) (*benchdata.Summary, error) {
	// No replayed ticks: this command's progress is live, the workers'
	// would arrive only at the end.
	wo := bench.WorkersOptions{ReadyTimeout: cmp.Or(r.f.WorkersReadyTimeout, bench.WorkerReadyTimeout(r.o)),
		ResultTimeout: bench.WorkerResultTimeout(r.o), Warn: r.warn}
	if r.workers != nil {
		return r.workers.run(ctx, r.o, t, data, wo)
	}
	return bench.Run(ctx, r.o, t, data)
}

// warn prints a warning of the run on stderr.
func (r *benchRun) warn(msg string) { fmt.Fprintln(r.s.err, "redline bench: warning: "+msg) }

// print writes sum to stdout in redis-benchmark's layout, and redline's
// notes beyond it (connections, kernel counters, cluster nodes) to stderr,
// so a script that parses redis-benchmark's output parses redline's.
func (r *benchRun) print(sum *benchdata.Summary) {
	defer bench.WriteNotes(r.s.err, sum, !r.f.CSV && !r.f.Quiet)
	defer noteRequestsEnded(r.s.err, sum)
	switch {
	case r.f.CSV:
		bench.WriteCSVRow(r.s.out, sum)
	case r.f.Quiet:
		bench.WriteQuiet(r.s.out, sum)
	default:
		bench.WriteReport(r.s.out, sum)
	}
}

// noteRequestsEnded says when -n ended a --duration test early: with both,
// a test ends at whichever comes first (docs/bench.md), and a run that
// stopped at 1000 requests of a 1s test used to say nothing.
func noteRequestsEnded(w io.Writer, sum *benchdata.Summary) {
	c := sum.Config
	if c.DurationSec > 0 && c.Requests > 0 && !sum.Interrupted && sum.Requests >= c.Requests && sum.ElapsedSeconds < c.DurationSec {
		fmt.Fprintf(w, "%s: -n %d ended the test after %.3f s, before --duration %gs (with both, a test ends at whichever comes first)\n",
			sum.Title, c.Requests, sum.ElapsedSeconds, c.DurationSec)
	}
}

// save rewrites the JSON file and the HDR file after every test, so a crash
// or Ctrl-C keeps what was measured.
func (r *benchRun) save(sum *benchdata.Summary) error {
	if r.f.HdrOut != "" {
		if err := bench.WriteHgrmFile(r.f.HdrOut, sum); err != nil {
			return err
		}
	}
	if r.f.JSONOut == "" {
		return nil
	}
	doc := benchdata.Document{Schema: benchdata.DocumentSchema, Redline: Version(), CommandLine: r.argv, Started: r.started, Results: r.results}
	return benchdata.WriteDocument(r.f.JSONOut, doc)
}

// runIdle is -I: hold idle connections until Ctrl-C.
func runIdle(ctx context.Context, s *streams, o bench.Options) error {
	fmt.Fprintf(s.out, "Creating %d idle connections and waiting forever (Ctrl+C when done)\n", o.Clients)
	tty := isTerminal(s.out)
	err := bench.Idle(ctx, o, func(open int) {
		if tty {
			fmt.Fprintf(s.out, "clients: %d\r", open)
		}
	})
	if err != nil {
		return exitCode(ExitFailure, err.Error())
	}
	return nil
}
