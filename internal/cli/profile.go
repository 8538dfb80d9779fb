package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"redline/internal/atomicfile"
	"redline/internal/profile"
	"redline/internal/redisadmin"
	"redline/internal/secret"
)

func init() { register(newProfileCmd) }

// profileOptions are profile's flags.
type profileOptions struct {
	host      string
	port      int
	password  string
	passFile  string
	pid       int
	duration  time.Duration
	out       string
	json      bool
	frequency int
	top       int
	perf      string
	base      string
	syscalls  bool
}

func newProfileCmd(s *streams) *cobra.Command {
	o := &profileOptions{}
	cmd := &cobra.Command{
		Use:   "profile",
		Short: "Sample where a redis-server spends its CPU: folded stacks, top functions, flame graph",
		Long: `profile samples the on-CPU call stacks of every thread of a redis-server with Linux
perf (perf record -F 999 -g) for --duration, and writes to -o/--output DIR:

  folded.txt   one "thread;caller;...;function COUNT" line a stack (flamegraph.pl's format;
               kernel frames end in _[k])
  top.txt      the functions with the most samples, user and kernel apart (top.json with --json)
  flame.svg    a self-contained flame graph (no scripts, no network): user frames warm,
               kernel frames blue; hover a frame for its share
  breakdown.txt where the time went over the same interval, from /proc: per-CPU
               user/sys/irq/softirq/idle, the server's threads' CPU, context switches,
               migrations and run-queue wait, NET_RX/NET_TX softirqs (breakdown.json with --json)
  syscalls.txt the server's system calls by type over the same interval (perf stat on the
               syscalls:sys_enter_* tracepoints: counted in the kernel, not traced);
               --syscalls=false skips it (syscalls.json with --json)
  diff.txt, diff.svg   with --base: the functions whose share moved most against an earlier
               profile's folded.txt, and this profile's flame graph coloured by the move
               (red grew, blue shrank)

The server is found by --pid, or by asking the Redis on --host/--port for its process_id
(it must run on this host). Symbols come from the binaries and any debug packages
installed (Debian: redis-tools-dbgsym, as Debian's redis-server is a link to redis-tools'
redis-check-rdb; profile names the package it finds); perf never goes to the network (DEBUGINFOD_URLS is
emptied). perf must be installed (Debian: linux-perf) and allowed to sample: root, or
kernel.perf_event_paranoid at 1 or below.`,
		Example: `  redline profile -p 6379 --duration 10s -o prof
  redline profile --pid 4242 --duration 30s -o prof --json
  redline profile -p 6379 --duration 10s -o tuned --base baseline   # baseline/folded.txt`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("redline profile: unexpected argument %q (see redline profile --help)", args[0])
			}
			return nil
		},
		DisableAutoGenTag: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(cmd); err != nil {
				return err
			}
			return runProfile(cmd.Context(), s, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.host, "host", "127.0.0.1", "Redis `HOST` to ask for its process_id")
	f.IntVarP(&o.port, "port", "p", 6379, "Redis `PORT` to ask for its process_id")
	f.StringVarP(&o.password, "pass", "a", "", "Redis password (visible in ps: prefer --pass-file or REDISCLI_AUTH)")
	f.StringVar(&o.passFile, "pass-file", "", "read the Redis password from the first line of `FILE`")
	f.IntVar(&o.pid, "pid", 0, "profile this `PID` instead of asking Redis")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "how long to sample")
	f.StringVarP(&o.out, "output", "o", "", "write the files into `DIR` (created; required)")
	f.BoolVar(&o.json, "json", false, "also write top.json and breakdown.json")
	f.IntVar(&o.frequency, "frequency", profile.DefaultFrequency, "samples a second (`HZ`)")
	f.IntVar(&o.top, "top", 25, "functions listed on each side of top.txt")
	f.StringVar(&o.perf, "perf", profile.DefaultPerf, "the perf `BINARY`")
	f.BoolVar(&o.syscalls, "syscalls", true, "also count the server's system calls by type")
	f.StringVar(&o.base, "base", "", "compare with this earlier profile (`PATH`: its -o directory or folded.txt)")
	// The names every other command uses; the old ones stay, hidden, for
	// scripts written against them.
	alias(f, "password", "pass")
	alias(f, "out", "output")
	return cmd
}

func (o *profileOptions) validate(cmd *cobra.Command) error {
	switch {
	case o.out == "":
		return usageError("redline profile: -o/--output DIR is required")
	case o.duration <= 0:
		return usageError("redline profile: --duration must be positive, not %v", o.duration)
	case o.frequency <= 0 || o.top <= 0:
		return usageError("redline profile: --frequency and --top must be positive")
	case o.pid < 0:
		return usageError("redline profile: --pid %d is not a process", o.pid)
	case o.pid > 0 && cmd.Flags().Changed("port"):
		return usageError("redline profile: give --pid or -p/--port, not both")
	}
	if err := checkOutputs("profile", dirOutput("-o", o.out)); err != nil {
		return err
	}
	pw, err := secret.Resolve(o.password, o.passFile, secret.FromEnv())
	if err != nil {
		return usageError("redline profile: --pass-file: %v", err)
	}
	o.password = pw
	return nil
}

// serverPID asks the Redis at host:port for its process_id and checks it
// runs on this host.
func (o *profileOptions) serverPID(ctx context.Context) (int, error) {
	if o.pid > 0 {
		return o.pid, nil
	}
	addr := net.JoinHostPort(o.host, strconv.Itoa(o.port))
	c, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: addr, Password: o.password})
	if err != nil {
		return 0, exitCode(ExitError, fmt.Sprintf("redline profile: %v (or give --pid)", err))
	}
	defer c.Close()
	info, err := c.Info(ctx, "server")
	if err != nil {
		return 0, exitCode(ExitError, fmt.Sprintf("redline profile: INFO server on %s: %v", addr, err))
	}
	p := redisadmin.Locate(info, "/proc", 0, time.Now())
	if !p.Local {
		return 0, exitCode(ExitError, fmt.Sprintf("redline profile: %s: %s (give --pid)", addr, p.Reason))
	}
	return p.Pid, nil
}

// readBase reads --base before profiling, so a wrong path fails fast.
func (o *profileOptions) readBase() (*profile.Profile, error) {
	if o.base == "" {
		return nil, nil
	}
	path := o.base
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "folded.txt")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, usageError("redline profile: --base: %v", err)
	}
	defer f.Close()
	p, err := profile.ParseFolded(f)
	if err != nil {
		return nil, usageError("redline profile: --base %s: %v", path, err)
	}
	return p, nil
}

func runProfile(ctx context.Context, s *streams, o *profileOptions) error {
	base, err := o.readBase()
	if err != nil {
		return err
	}
	pid, err := o.serverPID(ctx)
	if err != nil {
		return err
	}
	if err := atomicfile.OwnDir(o.out, 0o755); err != nil {
		return exitCode(ExitError, fmt.Sprintf("redline profile: %v", err))
	}
	bo := profile.BreakdownOptions{PID: pid}
	if err := bo.LiveQueueIRQs(); err != nil {
		fmt.Fprintf(s.err, "redline profile: NIC queue interrupts not counted: %v\n", err)
	}
	bd, err := profile.StartBreakdown(bo)
	if err != nil {
		return exitCode(ExitError, fmt.Sprintf("redline profile: %v", err))
	}
	fmt.Fprintf(s.err, "profiling pid %d for %v ...\n", pid, o.duration)
	sys := o.countSyscalls(ctx, pid)
	data, err := profile.Sample(ctx, profile.RecordOptions{PID: pid, Duration: o.duration, Frequency: o.frequency, Perf: o.perf})
	if errors.Is(err, profile.ErrPerfMissing) || errors.Is(err, profile.ErrPerfForbidden) {
		return exitCode(ExitError, fmt.Sprintf("redline profile: %v", err))
	}
	if err != nil {
		return fmt.Errorf("profile pid %d: %w", pid, err)
	}
	breakdown, err := bd.Stop() // the same interval as the samples, not the symbolizing after
	if err != nil {
		return fmt.Errorf("breakdown of pid %d: %w", pid, err)
	}
	rec, err := data.Read(ctx)
	if err != nil {
		return fmt.Errorf("profile pid %d: %w", pid, err)
	}
	counted := <-sys
	if counted.err != nil {
		fmt.Fprintf(s.err, "redline profile: no system call counts: %v\n", counted.err)
	}
	return writeProfile(s, o, &profileResult{rec: rec, breakdown: breakdown, base: base, syscalls: counted.counts})
}

// syscallResult is what the background count returns; the caller prints
// (the goroutine never writes to the streams: the command may be printing
// its own error at the same time).
type syscallResult struct {
	counts *profile.SyscallCounts
	err    error
}

// countSyscalls counts the server's system calls beside the sampling, in
// the background; a failure is a warning, not the command's failure.
func (o *profileOptions) countSyscalls(ctx context.Context, pid int) <-chan syscallResult {
	ch := make(chan syscallResult, 1) // buffered: an early return leaves it unread
	if !o.syscalls {
		ch <- syscallResult{}
		return ch
	}
	go func() {
		c, err := profile.CountSyscalls(ctx, profile.SyscallOptions{PID: pid, Duration: o.duration, Perf: o.perf})
		ch <- syscallResult{counts: c, err: err}
	}()
	return ch
}

// profileResult is what runProfile measured.
type profileResult struct {
	rec       *profile.Recording
	breakdown *profile.Breakdown
	base      *profile.Profile // nil without --base
	syscalls  *profile.SyscallCounts
}

// writeProfile writes the files and prints the top of the tables.
func writeProfile(s *streams, o *profileOptions, r *profileResult) error {
	rec, bd, base := r.rec, r.breakdown, r.base
	top := profile.TopOf(rec, o.top)
	title := fmt.Sprintf("pid %d, %v at %d Hz, %d samples", rec.PID, rec.Duration, rec.Frequency, top.Samples)
	files := []struct {
		name string
		json bool
		fill func(*bytes.Buffer) error
	}{
		{"diff.txt", false, func(b *bytes.Buffer) error { return profile.WriteDiff(b, profile.Diff(base, rec.Profile, o.top)) }},
		{"diff.svg", false, func(b *bytes.Buffer) error {
			return profile.WriteDiffFlameSVG(b, base, rec.Profile, profile.FlameOptions{Title: title + ", against " + o.base})
		}},
		{"folded.txt", false, func(b *bytes.Buffer) error { return rec.Profile.WriteFolded(b) }},
		{"top.txt", false, func(b *bytes.Buffer) error { return profile.WriteTop(b, top) }},
		{"flame.svg", false, func(b *bytes.Buffer) error {
			return profile.WriteFlameSVG(b, rec.Profile, profile.FlameOptions{Title: title})
		}},
		{"breakdown.txt", false, func(b *bytes.Buffer) error { return profile.WriteBreakdown(b, bd) }},
		{"syscalls.txt", false, func(b *bytes.Buffer) error { return profile.WriteSyscalls(b, r.syscalls) }},
		{"syscalls.json", true, func(b *bytes.Buffer) error { return writeJSON(b, r.syscalls) }},
		{"top.json", true, func(b *bytes.Buffer) error { return writeJSON(b, top) }},
		{"breakdown.json", true, func(b *bytes.Buffer) error { return writeJSON(b, bd) }},
	}
	var wrote []string
	for _, f := range files {
		if (f.json && !o.json) || (base == nil && strings.HasPrefix(f.name, "diff.")) ||
			(r.syscalls == nil && strings.HasPrefix(f.name, "syscalls.")) {
			continue
		}
		var b bytes.Buffer
		if err := f.fill(&b); err != nil {
			return err
		}
		if err := atomicfile.Write(filepath.Join(o.out, f.name), b.Bytes(), 0o644); err != nil {
			return exitCode(ExitError, fmt.Sprintf("redline profile: %v", err))
		}
		wrote = append(wrote, f.name)
	}
	fmt.Fprintln(s.out, title)
	short := profile.TopOf(rec, 8)
	if err := profile.WriteTop(s.out, short); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "\nwrote %s in %s\n", strings.Join(wrote, ", "), o.out)
	return nil
}

func writeJSON(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
