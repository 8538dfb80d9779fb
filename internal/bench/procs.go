package bench

import (
	"runtime"
	"sync"
)

// An event loop blocks in a raw epoll_wait, which keeps its P (the Go
// scheduler's slot for running Go code): that is what makes the loop cheap
// (no hand-off of the P at every wait, no spinning thread woken on another
// CPU). But when loops outnumber the Ps, the loops without one wait in the
// run queue until the runtime's 10 ms preemption takes a P from a blocked
// loop, so only GOMAXPROCS loops run at a time and every request's latency
// includes that queueing: --threads 40 on 2 CPUs measured p50 0.04 ms and
// max 600 ms where 0.7 ms and 6 ms were true. procsFor gives the process
// enough Ps for every running loop plus one for the rest of the program
// (timers, progress, the caller), and puts GOMAXPROCS back when the last
// run that needed more ends. The OS then shares the CPUs among the loops'
// threads, as it does among redis-benchmark's pthreads.

var procs struct {
	mu     sync.Mutex
	loops  int // event loops of the runs in progress
	orig   int // GOMAXPROCS before the first of them raised it; 0: not raised
	raised int // what it was raised to
}

// procHeadroom is the Ps left for goroutines other than the loops.
const procHeadroom = 1

// procsFor registers n event loops and raises GOMAXPROCS if they and the
// headroom do not fit; the returned function unregisters them.
func procsFor(n int) (release func()) {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	procs.loops += n
	cur := runtime.GOMAXPROCS(0)
	if procs.orig == 0 && procs.loops > cur {
		procs.orig = cur
	}
	if procs.orig != 0 && procs.loops+procHeadroom > cur {
		procs.raised = procs.loops + procHeadroom
		runtime.GOMAXPROCS(procs.raised)
	}
	return func() {
		procs.mu.Lock()
		defer procs.mu.Unlock()
		procs.loops -= n
		if procs.loops == 0 && procs.orig != 0 {
			// Someone else may have set it meanwhile; only undo our own.
			if runtime.GOMAXPROCS(0) == procs.raised {
				runtime.GOMAXPROCS(procs.orig)
			}
			procs.orig, procs.raised = 0, 0
		}
	}
}
