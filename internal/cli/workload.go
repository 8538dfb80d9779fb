package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"redline/internal/atomicfile"
	"redline/internal/bench"
	"redline/internal/bench/cmdline"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/secret"
	"redline/internal/workload"
)

func init() { register(newWorkloadCmd) }

func newWorkloadCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workload",
		Short: "workload files: capture a live server's traffic shape, check a file, compare a replay with its source",
		Long: `A workload file (docs/workload.md) is a data set to preload and a weighted mix of operations;
"redline bench --workload-file FILE" runs it. "workload capture" writes one from a live server's
INFO commandstats and a sample of its keys (read-only, bounded, no key name or value copied);
"workload compare" replays a captured file on a scratch server and prints how far the replay's
command shares, sizes, key count and memory are from the source's.`,
		DisableAutoGenTag: true,
	}
	cmd.AddCommand(newWorkloadCaptureCmd(s), newWorkloadCompareCmd(s), newWorkloadCheckCmd(s))
	return cmd
}

type captureFlags struct {
	host, addr, user, passFile, out string
	port                            int
	opts                            workload.CaptureOptions
}

func newWorkloadCaptureCmd(s *streams) *cobra.Command {
	f := &captureFlags{}
	cmd := &cobra.Command{
		Use:   "capture -o FILE [-h HOST -p PORT | --addr HOST:PORT]",
		Short: "write a workload file from a live server's traffic (read-only, bounded)",
		Long: `capture counts the server's commands over --duration (INFO commandstats, before and after) and
samples up to --sample keys (SCAN, then TYPE, PTTL, the length and one element of each), at most
--probe-rate of its own commands a second. It writes a workload file whose preload reproduces the
key patterns, types, element counts and sizes and TTL share, and whose operations reproduce the
command mix. Key patterns are hashed (--keep-names keeps their words); values are never read
whole or copied. MONITOR is never used.`,
		Example: `  redline workload capture -h 10.0.0.5 -p 6379 --duration 30s -o prod.yaml
  redline workload compare -f prod.yaml --duration 20s`,
		Args:              cobra.NoArgs,
		DisableAutoGenTag: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCapture(cmd.Context(), s, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.host, "host", "h", "127.0.0.1", "server hostname")
	fl.IntVarP(&f.port, "port", "p", 6379, "server port")
	fl.StringVar(&f.addr, "addr", "", "server `HOST:PORT` (instead of -h and -p)")
	fl.StringVar(&f.user, "user", "", "ACL username (needs a password)")
	fl.StringVar(&f.passFile, "pass-file", "", "read the password from the first line of `FILE` (or set REDISCLI_AUTH)")
	fl.StringVarP(&f.out, "output", "o", "", "write the workload file to `FILE` (required)")
	fl.DurationVar(&f.opts.Duration, "duration", workload.DefaultCaptureDuration, "window over which commands are counted")
	fl.IntVar(&f.opts.Sample, "sample", workload.DefaultSample, "most keys sampled")
	fl.Float64Var(&f.opts.ProbeRate, "probe-rate", workload.DefaultProbeRate, "most of capture's own commands a second")
	fl.BoolVar(&f.opts.KeepNames, "keep-names", false, "keep the words of key patterns (default: hashed)")
	return cmd
}

func runCapture(ctx context.Context, s *streams, f *captureFlags) error {
	if f.out == "" {
		return usageError("redline workload capture: give -o FILE for the workload file")
	}
	if f.opts.Duration <= 0 || f.opts.Sample < 1 || f.opts.ProbeRate <= 0 {
		return usageError("redline workload capture: --duration, --sample and --probe-rate must be positive")
	}
	if err := checkOutputs("workload capture", fileOutput("-o", f.out)); err != nil {
		return err
	}
	addr := f.addr
	if addr == "" {
		addr = net.JoinHostPort(f.host, strconv.Itoa(f.port))
	}
	pw, err := secret.Resolve("", f.passFile, secret.FromEnv())
	if err != nil {
		return usageError("redline workload capture: --pass-file: %v", err)
	}
	c, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: addr, Username: f.user, Password: pw})
	if err != nil {
		return exitCode(ExitFailure, "redline workload capture: "+err.Error())
	}
	defer c.Close()
	file, err := workload.Capture(ctx, c, f.opts)
	if err != nil {
		return exitCode(ExitFailure, "redline workload capture: "+err.Error())
	}
	b, err := workload.Marshal(file)
	if err != nil {
		return exitCode(ExitFailure, "redline workload capture: "+err.Error())
	}
	if err := atomicfile.Write(f.out, b, 0o644); err != nil {
		return exitCode(ExitFailure, "redline workload capture: "+err.Error())
	}
	fmt.Fprintf(s.err, "redline workload capture: %d keys, %d sampled, %d operations, %d commands of its own; wrote %s\n",
		file.Source.Keys, sampled(file.Source), len(file.Run.Ops), c.RoundTrips, f.out)
	return nil
}

func sampled(p *workload.Profile) int {
	n := 0
	for _, t := range p.Types {
		n += t.Sampled
	}
	return n
}

func newWorkloadCheckCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:               "check FILE",
		Short:             "validate a workload file (errors name their line)",
		Args:              cobra.ExactArgs(1),
		DisableAutoGenTag: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := workload.Load(args[0])
			if err != nil {
				return usageError("redline workload check: %v", err)
			}
			fmt.Fprintf(s.out, "%s: %d keyspaces, %d preload entries, %d operations\n", args[0], len(f.Keyspaces), len(f.Preload), len(f.Run.Ops))
			return nil
		},
	}
}

type compareFlags struct {
	file, scratch string
	duration      time.Duration
	sample        int
	bf            *cmdline.Flags
}

func newWorkloadCompareCmd(s *streams) *cobra.Command {
	f := &compareFlags{}
	cmd := &cobra.Command{
		Use:   "compare -f FILE [--scratch HOST:PORT]",
		Short: "replay a captured workload file on a scratch server and print how it differs from the source",
		Long: `compare starts a scratch redis-server (or uses the empty one at --scratch), preloads the file's
data set, runs its operations for --duration, and measures the scratch server as capture measured
the source: each command's share of calls (limit ±5 points), each type's element counts and sizes
(median and p90, limit 10%), the key count and used memory (limit 10%). It exits 1 when a figure
is outside its limit.`,
		Args:              cobra.NoArgs,
		DisableAutoGenTag: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCompare(cmd.Context(), s, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.file, "file", "f", "", "the captured workload file")
	fl.StringVar(&f.scratch, "scratch", "", "replay on the empty server at `HOST:PORT` (default: start one)")
	fl.DurationVar(&f.duration, "duration", 10*time.Second, "how long the operations run")
	fl.IntVar(&f.sample, "sample", workload.DefaultSample, "most keys sampled on the scratch server")
	return cmd
}

func runCompare(ctx context.Context, s *streams, f *compareFlags) error {
	if f.file == "" {
		return usageError("redline workload compare: give -f FILE (a file workload capture wrote)")
	}
	file, err := workload.Load(f.file)
	if err != nil {
		return usageError("redline workload compare: %v", err)
	}
	if file.Source == nil {
		return usageError("redline workload compare: %s has no source: section (only files workload capture writes can be compared)", f.file)
	}
	addr := f.scratch
	if addr == "" {
		srv, err := redisserver.Start(ctx, redisserver.Options{})
		if err != nil {
			return exitCode(ExitFailure, "redline workload compare: start a scratch redis-server: "+err.Error())
		}
		defer srv.Stop()
		addr = srv.Addr()
	} else if err := checkEmpty(ctx, addr); err != nil {
		return exitCode(ExitFailure, "redline workload compare: "+err.Error())
	}
	o := bench.DefaultOptions()
	o.Addr = addr
	rep, err := workload.Replay(ctx, o, file, f.duration, f.sample)
	if err != nil {
		return exitCode(ExitFailure, "redline workload compare: "+err.Error())
	}
	diffs := workload.Compare(file.Source, rep)
	if !printDiffs(s.out, diffs) {
		return exitCode(ExitFailure, "redline workload compare: some figures are outside their limits (marked FAIL)")
	}
	return nil
}

// checkEmpty refuses a --scratch server that holds keys: compare writes.
func checkEmpty(ctx context.Context, addr string) error {
	c, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: addr})
	if err != nil {
		return err
	}
	defer c.Close()
	v, err := c.Do(ctx, "DBSIZE")
	if err != nil {
		return err
	}
	if v.Str != "0" {
		return fmt.Errorf("--scratch %s holds %s keys: compare writes to it, give an empty scratch server", addr, v.Str)
	}
	return nil
}

func printDiffs(w io.Writer, diffs []workload.Diff) bool {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\tsource\treplay\tdifference\t\t")
	ok := true
	for _, d := range diffs {
		mark := "ok"
		if !d.OK {
			mark, ok = "FAIL", false
		}
		fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%+.1f %s\t%s\t\n", d.What, d.Source, d.Replay, d.Delta, d.Unit, mark)
	}
	tw.Flush()
	return ok
}
