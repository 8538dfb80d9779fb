package bench

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"redline/internal/testutil/respscript"
)

func TestProcsForRaisesOnlyWhenLoopsOutnumberPs(t *testing.T) {
	orig := runtime.GOMAXPROCS(0)
	fits := procsFor(orig)
	if got := runtime.GOMAXPROCS(0); got != orig {
		t.Errorf("%d loops on %d Ps: GOMAXPROCS = %d, want it left alone", orig, orig, got)
	}
	more := procsFor(3)
	if got, want := runtime.GOMAXPROCS(0), orig+3+procHeadroom; got != want {
		t.Errorf("%d loops: GOMAXPROCS = %d, want %d", orig+3, got, want)
	}
	more()
	fits()
	if got := runtime.GOMAXPROCS(0); got != orig {
		t.Errorf("after the runs: GOMAXPROCS = %d, want %d back", got, orig)
	}
}

// TestRunMoreLoopsThanCPUs runs more event loops than the process has Ps
// (and this machine CPUs) against a server that delays every reply by D.
// While the run is measuring, every loop must hold a P of its own (else
// the loops without one queue behind raw epoll_waits and only GOMAXPROCS
// of them run at a time); the latency must still reflect the server's
// delay, and GOMAXPROCS must be back afterwards.
func TestRunMoreLoopsThanCPUs(t *testing.T) {
	const delay = 2 * time.Millisecond
	orig := runtime.GOMAXPROCS(0)
	loops := 2*max(orig, runtime.NumCPU()) + 1
	s := respscript.Start(t, respscript.Options{Script: func(r respscript.Request) respscript.Action {
		switch {
		case r.Cmd != "SET":
			return respscript.Reply()
		case r.N == int64(loops): // held until the test has looked at the Ps
			return respscript.Stall()
		default:
			return respscript.Delay(delay)
		}
	}})
	o := scriptedOptions(s)
	o.Clients, o.Threads, o.Requests = loops, loops, int64(loops*20)
	o.ProgressInterval = time.Millisecond
	var seen atomic.Int64
	o.Progress = func(Progress) {
		seen.Store(int64(runtime.GOMAXPROCS(0)))
		s.Release()
	}
	sum, err := runSuiteTest(t, o, "set")
	if err != nil {
		t.Fatal(err)
	}
	if got := seen.Load(); got < int64(loops+procHeadroom) {
		t.Errorf("%d event loops ran with GOMAXPROCS %d: loops without a P wait behind the others' epoll_wait", loops, got)
	}
	if got := runtime.GOMAXPROCS(0); got != orig {
		t.Errorf("GOMAXPROCS after the run = %d, want %d", got, orig)
	}
	// Every reply but the held one comes after the server's delay.
	if sum.Requests != o.Requests || sum.Latency.P50 < ms(delay) {
		t.Errorf("%d requests, p50 %.3f ms: want %d, p50 at least the server's %v", sum.Requests, sum.Latency.P50, o.Requests, delay)
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
