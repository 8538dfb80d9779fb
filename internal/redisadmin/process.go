package redisadmin

// Where the server runs. INFO gives process_id and uptime_in_seconds; a
// process with that pid on this host is the server only if it also started
// when the server says it did. /proc/PID/stat has the start time in clock
// ticks since boot (field 22), /proc/stat the boot time:
//
//	9726 (redis-server) S 1 9726 ... 0 20 0 4 0 123456 ...
//	btime 1795900000

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, fixed at 100 on every Linux architecture redline
// supports (the kernel exports times in /proc in these units).
const clockTicks = 100

// startSlack is how far the process start time and INFO's uptime may
// disagree: uptime_in_seconds is truncated and the server initialises for
// a moment before it starts counting.
const startSlack = 3 * time.Second

// Process says where the server runs, as far as this host can tell.
type Process struct {
	Pid int `json:"pid"`
	// Local is true when a process on this host is the server: same pid,
	// a redis-like name and the same start time.
	Local bool `json:"local"`
	// Reason says how Local was decided, for the report.
	Reason string `json:"reason"`
	Comm   string `json:"comm,omitempty"`
	// NetNS and OwnNetNS are the server's and this process's network
	// namespaces ("net:[4026531840]"); empty when unreadable.
	NetNS    string `json:"netns,omitempty"`
	OwnNetNS string `json:"own_netns,omitempty"`
}

// SameNetNS reports whether the server shares this process's network
// namespace; known is false when either could not be read.
func (p Process) SameNetNS() (same, known bool) {
	if p.NetNS == "" || p.OwnNetNS == "" {
		return false, false
	}
	return p.NetNS == p.OwnNetNS, true
}

// Locate decides whether the server described by info runs on this host,
// reading procRoot ("/proc" on a live host). pid, when non-zero, overrides
// INFO's process_id (for a server in another PID namespace whose host pid
// the user knows).
func Locate(info *Info, procRoot string, pid int, now time.Time) Process {
	if pid == 0 {
		pid, _ = info.ProcessID()
	}
	p := Process{Pid: pid}
	if pid <= 0 {
		p.Reason = "INFO has no process_id"
		return p
	}
	comm, start, err := procStart(procRoot, pid)
	if err != nil {
		p.Reason = fmt.Sprintf("no process %d readable on this host (%v): the server runs on another host or in another PID namespace", pid, err)
		return p
	}
	p.Comm = comm
	if !redisLike(comm) {
		p.Reason = fmt.Sprintf("process %d on this host is %q, not a Redis server", pid, comm)
		return p
	}
	if up, ok := info.Int("uptime_in_seconds"); ok {
		want := now.Add(-time.Duration(up) * time.Second)
		if d := start.Sub(want); d > startSlack || d < -startSlack-time.Second {
			p.Reason = fmt.Sprintf("process %d on this host started at %s, but the server started at %s: a different process", pid, start.Format(time.RFC3339), want.Format(time.RFC3339))
			return p
		}
	}
	p.Local = true
	p.Reason = fmt.Sprintf("process %d (%s) on this host started when the server did", pid, comm)
	p.NetNS, _ = os.Readlink(filepath.Join(procRoot, strconv.Itoa(pid), "ns", "net"))
	p.OwnNetNS, _ = os.Readlink(filepath.Join(procRoot, "self", "ns", "net"))
	return p
}

// redisLike accepts the names the server's main thread goes by.
func redisLike(comm string) bool {
	for _, n := range []string{"redis", "valkey", "keydb"} {
		if strings.Contains(comm, n) {
			return true
		}
	}
	return false
}

// procStart returns a process's command name and start time.
func procStart(procRoot string, pid int) (string, time.Time, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", time.Time{}, err
	}
	comm, ticks, err := parseStatStart(string(b))
	if err != nil {
		return "", time.Time{}, err
	}
	boot, err := bootTime(procRoot)
	if err != nil {
		return "", time.Time{}, err
	}
	return comm, boot.Add(time.Duration(ticks) * time.Second / clockTicks), nil
}

// parseStatStart returns comm (field 2) and starttime (field 22) of a
// /proc/PID/stat line. comm may hold spaces and parentheses, so the fields
// after it are counted from the last ')'.
func parseStatStart(s string) (string, int64, error) {
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return "", 0, fmt.Errorf("stat line has no (comm): %.40q", s)
	}
	rest := strings.Fields(s[close+1:])
	const startField = 22 - 3 // fields after comm start at field 3
	if len(rest) <= startField {
		return "", 0, fmt.Errorf("stat line has %d fields, want at least 22", len(rest)+2)
	}
	n, err := strconv.ParseInt(rest[startField], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("stat starttime: %w", err)
	}
	return s[open+1 : close], n, nil
}

func bootTime(procRoot string) (time.Time, error) {
	b, err := os.ReadFile(filepath.Join(procRoot, "stat"))
	if err != nil {
		return time.Time{}, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("btime: %w", err)
			}
			return time.Unix(n, 0), nil
		}
	}
	return time.Time{}, fmt.Errorf("%s/stat has no btime line", procRoot)
}
