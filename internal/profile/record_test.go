package profile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"redline/internal/bench"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/testutil"
)

// hotPath are the frames that say a profile saw Redis serving requests:
// its command dispatch when the binary has symbols for it, or the
// kernel's TCP receive path, which every request crosses, when not.
var hotPath = []Frame{
	{Name: "processCommand"}, {Name: "call"},
	{Name: "tcp_v4_rcv", Kernel: true}, {Name: "tcp_recvmsg", Kernel: true}, {Name: "tcp_rcv_established", Kernel: true},
}

// Load runs redline bench's SET test against s until the test ends.
func load(t *testing.T, s *redisserver.Server) {
	t.Helper()
	tests, err := bench.SuiteTests([]string{"set"}, true)
	if err != nil {
		t.Fatal(err)
	}
	o := bench.DefaultOptions()
	o.Network, o.Addr, o.Clients, o.Duration = "tcp", s.Addr(), 8, time.Hour
	o.Keys.Space = 100000
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		bench.Run(ctx, o, tests[0], nil) // its errors are not this test's
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// skipUnlessPerf skips when perf cannot sample here, saying why.
func skipUnlessPerf(t *testing.T, err error) {
	t.Helper()
	testutil.Need(t, DefaultPerf) // missing: fails in CI, naming the package
	if errors.Is(err, ErrPerfMissing) || errors.Is(err, ErrPerfForbidden) {
		t.Skipf("perf cannot sample here: %v", err)
	}
}

func TestRecordRedisUnderLoad(t *testing.T) {
	s := redistest.Start(t)
	load(t, s)
	dir := t.TempDir()
	rec, err := Record(context.Background(), RecordOptions{PID: s.Pid(), Duration: 2 * time.Second, Dir: dir})
	skipUnlessPerf(t, err)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "perf.data")); err != nil {
		t.Errorf("perf.data not kept in Dir: %v", err)
	}
	if rec.Profile.Samples() == 0 {
		t.Fatal("no samples of a server under load")
	}
	var seen []string
	for _, st := range rec.Profile.Stacks {
		for _, f := range st.Frames {
			for _, h := range hotPath {
				if f == h {
					seen = append(seen, f.folded())
				}
			}
		}
	}
	t.Logf("%d samples; hot-path frames seen: %d (first %v)", rec.Profile.Samples(), len(seen), seen[:min(1, len(seen))])
	if len(seen) == 0 {
		top := Top(rec.Profile, 10)
		var b strings.Builder
		WriteTop(&b, top)
		t.Errorf("no hot-path frame (%v) in %d samples:\n%s", hotPath, rec.Profile.Samples(), b.String())
	}
}

func TestRecordErrors(t *testing.T) {
	_, err := Record(context.Background(), RecordOptions{PID: os.Getpid(), Duration: time.Second, Perf: "/nonexistent/perf"})
	if !errors.Is(err, ErrPerfMissing) {
		t.Errorf("missing perf: %v", err)
	}
	if _, err := Record(context.Background(), RecordOptions{PID: 0, Duration: time.Second}); err == nil {
		t.Error("pid 0: no error")
	}
}

func TestCheckParanoid(t *testing.T) {
	proc := t.TempDir()
	os.MkdirAll(filepath.Join(proc, "sys/kernel"), 0o755)
	for _, c := range []struct {
		level string
		euid  int
		ok    bool
	}{{"2", 1000, false}, {"1", 1000, true}, {"3", 0, true}, {"", 1000, true}} {
		path := filepath.Join(proc, "sys/kernel/perf_event_paranoid")
		os.Remove(path)
		if c.level != "" {
			os.WriteFile(path, []byte(c.level+"\n"), 0o644)
		}
		err := checkParanoid(proc, c.euid)
		if (err == nil) != c.ok {
			t.Errorf("level %q euid %d: %v", c.level, c.euid, err)
		}
		if err != nil && (!errors.Is(err, ErrPerfForbidden) || !strings.Contains(err.Error(), "kernel.perf_event_paranoid")) {
			t.Errorf("error does not name the sysctl: %v", err)
		}
	}
}

// fakePerf writes a shell script standing in for perf: body runs with
// the subcommand in $1.
func fakePerf(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(testutil.TrustedTempDir(t), "perf")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRecordWithFakePerf(t *testing.T) {
	fixture, err := filepath.Abs(fixtures + "perf-script-tcp.txt")
	if err != nil {
		t.Fatal(err)
	}
	perf := fakePerf(t, `case "$1" in
record) [ -z "$DEBUGINFOD_URLS" ] || exit 9; exit 0;;
script) [ -z "$DEBUGINFOD_URLS" ] || exit 9; cat `+fixture+`;;
esac`)
	rec, err := Record(context.Background(), RecordOptions{PID: os.Getpid(), Duration: 10 * time.Millisecond, Perf: perf})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Profile.Samples() != 60 || rec.Frequency != DefaultFrequency || rec.Command[1] != "record" {
		t.Errorf("recording: %d samples, %+v", rec.Profile.Samples(), rec.Command)
	}
}

func TestRecordPerfFailures(t *testing.T) {
	o := RecordOptions{PID: os.Getpid(), Duration: 10 * time.Millisecond}
	o.Perf = fakePerf(t, `echo "Error: Access to performance monitoring and observability operations is limited.
Consider adjusting /proc/sys/kernel/perf_event_paranoid setting" >&2; exit 255`)
	_, err := Record(context.Background(), o)
	if !errors.Is(err, ErrPerfForbidden) || !strings.Contains(err.Error(), "kernel.perf_event_paranoid") {
		t.Errorf("forbidden: %v", err)
	}
	o.Perf = fakePerf(t, `echo "something broke" >&2; exit 1`)
	if _, err = Record(context.Background(), o); err == nil || !strings.Contains(err.Error(), "something broke") {
		t.Errorf("failure without its stderr: %v", err)
	}
	// A perf that hangs is killed at the caller's deadline (its own
	// deadline, StepSlack past the duration, works the same way).
	o.Perf = fakePerf(t, `exec sleep 600`)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err = Record(ctx, o); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hung perf: %v", err)
	}
}
