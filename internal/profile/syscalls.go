package profile

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"redline/internal/trusted"
)

// DefaultSyscalls are the system calls counted by default: Redis's event
// loop (epoll, read/write and their vector and socket forms), its
// threads' hand-offs (futex), persistence (fsync, fdatasync) and memory
// (brk, mmap, munmap, madvise).
var DefaultSyscalls = []string{
	"read", "write", "readv", "writev", "recvfrom", "sendto", "recvmsg", "sendmsg",
	"epoll_wait", "epoll_pwait", "epoll_ctl", "accept4", "close", "futex",
	"fsync", "fdatasync", "brk", "mmap", "munmap", "madvise",
}

// SyscallOptions say whose system calls to count.
type SyscallOptions struct {
	PID      int
	Duration time.Duration
	Syscalls []string // names without "sys_enter_" (default DefaultSyscalls)
	Perf     string   // default DefaultPerf
}

// SyscallCounts are a process's system calls by type over an interval.
type SyscallCounts struct {
	Duration time.Duration `json:"duration_ns"`
	// Counts holds the calls of each type counted; a type the kernel
	// could not count is absent.
	Counts map[string]uint64 `json:"counts"`
}

// CountSyscalls counts o.PID's system calls by type for o.Duration with
// perf stat on the syscalls:sys_enter_* tracepoints: counting, not
// tracing, so the kernel only increments a counter a call.
func CountSyscalls(ctx context.Context, o SyscallOptions) (*SyscallCounts, error) {
	if o.Perf == "" {
		o.Perf = DefaultPerf
	}
	if len(o.Syscalls) == 0 {
		o.Syscalls = DefaultSyscalls
	}
	perf, err := trusted.Program(o.Perf)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPerfMissing, err)
	}
	events := make([]string, len(o.Syscalls))
	for i, s := range o.Syscalls {
		events[i] = "syscalls:sys_enter_" + s
	}
	// perf stat writes its counts to stderr; -o sends them to stdout.
	argv := []string{perf, "stat", "-x", ",", "-o", "/dev/stdout", "-e", strings.Join(events, ","),
		"-p", strconv.Itoa(o.PID), "--", "sleep", strconv.FormatFloat(o.Duration.Seconds(), 'f', 3, 64)}
	out, err := runStep(ctx, o.Duration+StepSlack, argv)
	if err != nil {
		return nil, fmt.Errorf("perf stat (syscall tracepoints; tracefs must be mounted): %w", err)
	}
	counts, err := parsePerfStatCSV(strings.NewReader(string(out)))
	if err != nil {
		return nil, err
	}
	return &SyscallCounts{Duration: o.Duration, Counts: counts}, nil
}

// perf stat -x , lines: count, unit, event, run time, % running, ...;
// "#" comments and blank lines skipped; "<not counted>" and "<not
// supported>" counts left out:
//
//	56667,,syscalls:sys_enter_read,630002423,100.00,,
//	<not supported>,,syscalls:sys_enter_fsync,0,100.00,,
func parsePerfStatCSV(r io.Reader) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, ",")
		if len(f) < 3 {
			return nil, fmt.Errorf("perf stat line %d: %q is not \"COUNT,UNIT,EVENT,...\"", line, clip(text))
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue // <not counted>, <not supported>
		}
		name := f[2]
		if i := strings.LastIndex(name, "sys_enter_"); i >= 0 {
			name = name[i+len("sys_enter_"):]
		}
		out[name] += n
	}
	return out, sc.Err()
}

// WriteSyscalls writes c as a table, most frequent first, with rates.
func WriteSyscalls(w io.Writer, c *SyscallCounts) error {
	names := make([]string, 0, len(c.Counts))
	for n := range c.Counts {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if c.Counts[names[i]] != c.Counts[names[j]] {
			return c.Counts[names[i]] > c.Counts[names[j]]
		}
		return names[i] < names[j]
	})
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "system calls over %.2fs\n%-12s %12s %12s\n", c.Duration.Seconds(), "syscall", "calls", "per second")
	for _, n := range names {
		rate := 0.0
		if c.Duration > 0 {
			rate = float64(c.Counts[n]) / c.Duration.Seconds()
		}
		fmt.Fprintf(bw, "%-12s %12d %12.0f\n", n, c.Counts[n], rate)
	}
	return bw.Flush()
}
