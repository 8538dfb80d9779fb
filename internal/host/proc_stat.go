package host

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"strconv"
	"strings"
)

// /proc/PID/task/TID/stat is one line; comm is in parentheses and may
// itself hold spaces and parentheses, so fields are counted from the last
// ")". Field 3 is the state, 14/15 utime/stime, 39 the CPU last run on:
//
//	14139 (redis-server) S 1 14135 7860 0 -1 4194304 99 0 0 0 17 3 0 0 20 0 5 0 103216 ... 0 1 0 0 ...

// TaskStat is what a process's or thread's stat line says (utime and
// stime in clock ticks; CPU is the one it last ran on).
type TaskStat struct {
	Comm, State  string
	UTime, STime uint64
	CPU          int
}

// ParseTaskStat parses a /proc/PID/stat or /proc/PID/task/TID/stat line.
func ParseTaskStat(data []byte) (TaskStat, error) {
	s := strings.TrimSpace(string(data))
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return TaskStat{}, lineErr(1, "no (comm) in %q", clip(s))
	}
	f := strings.Fields(s[close+1:]) // f[0] is field 3
	const need = 39 - 2
	if len(f) < need {
		return TaskStat{}, lineErr(1, "%d fields, want at least 39", len(f)+2)
	}
	st := TaskStat{Comm: s[open+1 : close], State: f[0]}
	var err error
	for _, p := range []struct {
		dst   *uint64
		field int
	}{{&st.UTime, 14}, {&st.STime, 15}} {
		if *p.dst, err = strconv.ParseUint(f[p.field-3], 10, 64); err != nil {
			return st, lineErr(1, "field %d %q: %w", p.field, f[p.field-3], err)
		}
	}
	if st.CPU, err = strconv.Atoi(f[39-3]); err != nil || st.CPU < 0 {
		return st, lineErr(1, "field 39 (processor) %q is not a CPU", f[39-3])
	}
	return st, nil
}

// threadRoles names Redis threads by their comm.
var threadRoles = []struct{ prefix, role string }{
	{"io_thd_", "io"},
	{"bio_", "bio"},
	{"jemalloc_bg_thd", "jemalloc"},
}

func threadRole(pid, tid int, comm string) string {
	if tid == pid {
		return "main"
	}
	for _, r := range threadRoles {
		if strings.HasPrefix(comm, r.prefix) {
			return r.role
		}
	}
	return "other"
}

// readThreads reads every thread of pid: stat for name, state and CPU,
// status for its own affinity.
func readThreads(r *reader, p *Process) error {
	dir := fmt.Sprintf("/proc/%d/task", p.PID)
	ents, err := r.fs.ReadDir(dir)
	if err != nil && errors.Is(err, iofs.ErrPermission) {
		return err
	}
	if err != nil && !isAbsent(err) {
		r.fail(permissionHint(err))
	}
	for _, tid := range numbered(ents, "") {
		data, ok := r.file(fmt.Sprintf("%s/%d/stat", dir, tid))
		if !ok {
			continue // the thread ended
		}
		st, err := ParseTaskStat(data)
		if err != nil {
			r.fail(inFile(err, fmt.Sprintf("%s/%d/stat", dir, tid)))
			continue
		}
		t := Thread{TID: tid, Comm: st.Comm, Role: threadRole(p.PID, tid, st.Comm), State: st.State,
			CPU: intPtr(st.CPU), UTime: st.UTime, STime: st.STime}
		if node, ok := r.nodeOf[st.CPU]; ok {
			t.Node = intPtr(node)
		}
		readThreadStatus(r, p, &t, fmt.Sprintf("%s/%d/status", dir, tid))
		p.Threads = append(p.Threads, t)
	}
	return nil
}
