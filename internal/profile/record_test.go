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
