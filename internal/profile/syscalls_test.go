package profile

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"redline/internal/redistest"
	"redline/internal/testutil"
)

const perfStatCSV = `# started on Mon Nov 30 13:41:00 2026

56667,,syscalls:sys_enter_read,630002423,100.00,,
56647,,syscalls:sys_enter_write,630002423,100.00,,
4831,,syscalls:sys_enter_epoll_wait,630002423,100.00,,
0,,syscalls:sys_enter_epoll_ctl,630002423,100.00,,
<not supported>,,syscalls:sys_enter_fsync,0,100.00,,
`

func TestParsePerfStatCSV(t *testing.T) {
	got, err := parsePerfStatCSV(strings.NewReader(perfStatCSV))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got["read"] != 56667 || got["epoll_wait"] != 4831 || got["epoll_ctl"] != 0 {
		t.Errorf("counts: %v", got)
	}
	if _, ok := got["fsync"]; ok {
		t.Error("<not supported> counted")
	}
	if _, err := parsePerfStatCSV(strings.NewReader("12\n")); err == nil {
		t.Error("short line: no error")
	}
	var b bytes.Buffer
	WriteSyscalls(&b, &SyscallCounts{Duration: 2 * time.Second, Counts: got})
	testutil.Golden(t, fixtures+"syscalls.golden", b.Bytes())
}

func TestCountSyscallsFakePerf(t *testing.T) {
	perf := fakePerf(t, `cat <<'END'
`+perfStatCSV+`END`)
	c, err := CountSyscalls(context.Background(), SyscallOptions{PID: 1, Duration: 10 * time.Millisecond, Perf: perf})
	if err != nil {
		t.Fatal(err)
	}
	if c.Counts["write"] != 56647 {
		t.Errorf("counts: %v", c.Counts)
	}
}

func TestCountSyscallsRedisUnderLoad(t *testing.T) {
	s := redistest.Start(t)
	load(t, s)
	c, err := CountSyscalls(context.Background(), SyscallOptions{PID: s.Pid(), Duration: time.Second})
	skipUnlessPerf(t, err)
	if err != nil {
		if _, statErr := os.Stat("/sys/kernel/tracing/events/syscalls"); statErr != nil {
			t.Skipf("no syscall tracepoints here: %v", err)
		}
		t.Fatal(err)
	}
	// A server answering requests reads them and waits for more.
	if c.Counts["read"] == 0 || c.Counts["epoll_wait"] == 0 {
		t.Errorf("counts of a server under load: %v", c.Counts)
	}
}
