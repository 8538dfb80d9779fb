package profile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"redline/internal/host"
)

// The breakdown's /proc parsers. internal/host parses the same files into
// its Snapshot, but only through host.Read, which reads the whole machine;
// these read the few files a breakdown needs, twice a run, and fill
// host's types where it has them.

// /proc/stat's per-CPU lines, in clock ticks:
//
//	cpu0 59775 149 21023 162591 364 0 2094 134 0 0
//	     user  nice system idle iowait irq softirq steal guest guest_nice
func parseProcStat(data []byte) ([]host.CPUTime, error) {
	var out []host.CPUTime
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024) // the intr line is long
	for line := 1; sc.Scan(); line++ {
		name, rest, _ := strings.Cut(sc.Text(), " ")
		id, ok := strings.CutPrefix(name, "cpu")
		if !ok || id == "" {
			continue
		}
		cpu, err := strconv.Atoi(id)
		v, err2 := parseUints(strings.Fields(rest), 8)
		if err != nil || err2 != nil {
			return out, fmt.Errorf("/proc/stat line %d: %q is not \"cpuN\" and 8 counters", line, clip(sc.Text()))
		}
		out = append(out, host.CPUTime{CPU: cpu, User: v[0], Nice: v[1], System: v[2], Idle: v[3],
			IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]})
	}
	return out, nil
}

// parseUints parses the first n fields.
func parseUints(f []string, n int) ([]uint64, error) {
	if len(f) < n {
		return nil, fmt.Errorf("%d fields, want %d", len(f), n)
	}
	out := make([]uint64, n)
	for i := range out {
		var err error
		if out[i], err = strconv.ParseUint(f[i], 10, 64); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// /proc/softirqs, CPU columns then a row a softirq (only NET_RX and
// NET_TX are kept):
//
//	              CPU0       CPU1
//	NET_TX:          6          0
//	NET_RX:       1846       2007
func parseSoftirqs(data []byte) (*host.Softirqs, error) {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	s := &host.Softirqs{Counts: map[string][]uint64{}}
	for _, col := range strings.Fields(lines[0]) {
		cpu, err := strconv.Atoi(strings.TrimPrefix(col, "CPU"))
		if err != nil || !strings.HasPrefix(col, "CPU") {
			return nil, fmt.Errorf("/proc/softirqs line 1: %q is not a CPU column", clip(col))
		}
		s.CPUs = append(s.CPUs, cpu)
	}
	for i, l := range lines[1:] {
		name, rest, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || (name != "NET_RX" && name != "NET_TX") {
			continue
		}
		v, err := parseUints(strings.Fields(rest), len(s.CPUs))
		if err != nil {
			return nil, fmt.Errorf("/proc/softirqs line %d: %s: %w", i+2, name, err)
		}
		s.Counts[name] = v
	}
	return s, nil
}

// ThreadSample is one thread's counters at one moment, as read from /proc.
type ThreadSample struct {
	TID          int
	Comm         string
	CPU          int
	UTime, STime uint64 // clock ticks
	// From /proc/PID/task/TID/schedstat: ns on CPU, ns runnable waiting
	// on a run queue, timeslices run.
	RunNs, WaitNs, Slices *uint64
	// From /proc/PID/task/TID/sched (or status for the switches).
	Voluntary, Involuntary, Migrations *uint64
}

// /proc/PID/task/TID/stat: comm in parentheses (may hold spaces and
// parentheses), so fields count from the last ")"; 14/15 utime/stime, 39
// the CPU last run on.
//
//	14139 (redis-server) S 1 14135 7860 0 -1 4194304 99 0 0 0 17 3 0 0 20 0 5 0 103216 ... 0 1 0 0 ...
func parseTaskStat(data []byte, t *ThreadSample) error {
	s := strings.TrimSpace(string(data))
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return fmt.Errorf("no (comm) in %q", clip(s))
	}
	f := strings.Fields(s[close+1:]) // f[0] is field 3
	if len(f) < 39-2 {
		return fmt.Errorf("%d fields, want at least 39", len(f)+2)
	}
	t.Comm = s[open+1 : close]
	v, err := parseUints(f[14-3:], 2)
	cpu, err2 := strconv.Atoi(f[39-3])
	if err != nil || err2 != nil {
		return fmt.Errorf("utime/stime/processor not numbers in %q", clip(s))
	}
	t.UTime, t.STime, t.CPU = v[0], v[1], cpu
	return nil
}

// /proc/PID/task/TID/schedstat: ns running, ns waiting runnable, slices.
//
//	8597749751 82936729418 121691
func parseSchedstat(data []byte, t *ThreadSample) error {
	v, err := parseUints(strings.Fields(string(data)), 3)
	if err != nil {
		return fmt.Errorf("schedstat %q: %w", clip(string(data)), err)
	}
	t.RunNs, t.WaitNs, t.Slices = &v[0], &v[1], &v[2]
	return nil
}

// schedKeys are the /proc/PID/task/TID/sched (CONFIG_SCHED_DEBUG) and
// status lines read, and where they go:
//
//	se.nr_migrations                             :                 1073
//	nr_voluntary_switches                        :               112123
//	voluntary_ctxt_switches:	112124
var schedKeys = map[string]func(*ThreadSample) **uint64{
	"se.nr_migrations":           func(t *ThreadSample) **uint64 { return &t.Migrations },
	"nr_voluntary_switches":      func(t *ThreadSample) **uint64 { return &t.Voluntary },
	"nr_involuntary_switches":    func(t *ThreadSample) **uint64 { return &t.Involuntary },
	"voluntary_ctxt_switches":    func(t *ThreadSample) **uint64 { return &t.Voluntary },
	"nonvoluntary_ctxt_switches": func(t *ThreadSample) **uint64 { return &t.Involuntary },
}

func parseSchedLines(data []byte, t *ThreadSample) {
	for _, l := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(l, ":")
		dst := schedKeys[strings.TrimSpace(k)]
		if !ok || dst == nil {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64); err == nil {
			*dst(t) = &n
		}
	}
}

// readTask reads one thread; a thread that ended between listing and
// reading returns ok false.
func readTask(dir string, tid int) (t ThreadSample, ok bool, err error) {
	t.TID = tid
	data, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return t, false, nil
	}
	if err := parseTaskStat(data, &t); err != nil {
		return t, false, fmt.Errorf("%s/stat: %w", dir, err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "schedstat")); err == nil {
		if err := parseSchedstat(data, &t); err != nil {
			return t, false, fmt.Errorf("%s/schedstat: %w", dir, err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "sched")); err == nil {
		parseSchedLines(data, &t)
	}
	if t.Voluntary == nil {
		if data, err := os.ReadFile(filepath.Join(dir, "status")); err == nil {
			parseSchedLines(data, &t)
		}
	}
	return t, true, nil
}
