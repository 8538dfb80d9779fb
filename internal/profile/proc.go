package profile

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"redline/internal/host"
)

// The breakdown's /proc files are parsed by internal/host's parsers
// (ParseCPUTimes, ParseSoftirqs, ParseTaskStat), read here file by file:
// host.Read reads the whole machine, too much for twice a run. schedstat
// and sched, which the snapshot does not read, are parsed here.

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

// parseTaskStat fills t from a /proc/PID/task/TID/stat line.
func parseTaskStat(data []byte, t *ThreadSample) error {
	st, err := host.ParseTaskStat(data)
	if err != nil {
		return err
	}
	t.Comm, t.UTime, t.STime, t.CPU = st.Comm, st.UTime, st.STime, st.CPU
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
func readTask(fsys fs.FS, dir string, tid int) (t ThreadSample, ok bool, err error) {
	t.TID = tid
	data, err := fs.ReadFile(fsys, path.Join(dir, "stat"))
	if err != nil {
		return t, false, nil
	}
	if err := parseTaskStat(data, &t); err != nil {
		return t, false, fmt.Errorf("%s/stat: %w", dir, err)
	}
	if data, err := fs.ReadFile(fsys, path.Join(dir, "schedstat")); err == nil {
		if err := parseSchedstat(data, &t); err != nil {
			return t, false, fmt.Errorf("%s/schedstat: %w", dir, err)
		}
	}
	if data, err := fs.ReadFile(fsys, path.Join(dir, "sched")); err == nil {
		parseSchedLines(data, &t)
	}
	if t.Voluntary == nil {
		if data, err := fs.ReadFile(fsys, path.Join(dir, "status")); err == nil {
			parseSchedLines(data, &t)
		}
	}
	return t, true, nil
}
