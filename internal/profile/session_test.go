package profile

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"redline/internal/redistest"
	"redline/internal/testutil"
)

func TestSessionRedisUnderLoad(t *testing.T) {
	testutil.Heavy(t)
	s := redistest.Start(t)
	load(t, s)
	sess, err := Start(context.Background(), RecordOptions{PID: s.Pid()})
	skipUnlessPerf(t, err)
	if err != nil {
		t.Fatal(err)
	}
	// Wait for samples to be worth reading: the server's CPU time moves
	// by a second (a condition on the process, not a guessed sleep).
	waitCPU(t, s.Pid(), 100)
	data, err := sess.Stop()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := data.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Profile.Samples() == 0 || rec.Duration <= 0 || strings.Contains(strings.Join(rec.Command, " "), "sleep") {
		t.Fatalf("%d samples over %v, command %q", rec.Profile.Samples(), rec.Duration, rec.Command)
	}
}

// waitCPU waits until pid has used ticks more clock ticks of CPU.
func waitCPU(t *testing.T, pid int, ticks uint64) {
	t.Helper()
	o := BreakdownOptions{PID: pid}
	start, err := ReadSnapshot(o)
	if err != nil {
		t.Fatal(err)
	}
	used := func(s *Snapshot) (n uint64) {
		for _, th := range s.Threads {
			n += th.UTime + th.STime
		}
		return n
	}
	for {
		now, err := ReadSnapshot(o)
		if err != nil {
			t.Fatal(err)
		}
		if used(now) >= used(start)+ticks {
			return
		}
		time.Sleep(50 * time.Millisecond) // polling a condition
	}
}

func TestSessionPerfFailures(t *testing.T) {
	o := RecordOptions{PID: os.Getpid()}
	o.Perf = fakePerf(t, `echo "Error: Access to performance monitoring and observability operations is limited.
Consider adjusting /proc/sys/kernel/perf_event_paranoid setting" >&2; exit 255`)
	if _, err := Start(context.Background(), o); !errors.Is(err, ErrPerfForbidden) {
		t.Errorf("forbidden: %v", err)
	}
	o.Perf = "/nonexistent/perf"
	if _, err := Start(context.Background(), o); !errors.Is(err, ErrPerfMissing) {
		t.Errorf("missing: %v", err)
	}
	// A perf that never attaches is given up at the caller's deadline.
	o.Perf = fakePerf(t, `exec sleep 600`)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := Start(ctx, o); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("perf that never attaches: %v", err)
	}
}
