package doctor

import (
	"context"
	"runtime"
	"time"
)

// MeasureIntrinsicLatency measures this host's intrinsic latency the way
// redis-cli --intrinsic-latency does: a thread that never blocks reads the
// clock in a loop, and the longest gap between two reads is time the
// kernel or hypervisor held it off the CPU. It saturates one core for d
// (or until ctx ends) and returns the longest gap. It reads only.
func MeasureIntrinsicLatency(ctx context.Context, d time.Duration) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var worst time.Duration
	start := time.Now()
	last := start
	for n := 0; ; n++ {
		now := time.Now()
		if gap := now.Sub(last); gap > worst {
			worst = gap
		}
		last = now
		if now.Sub(start) >= d || n%4096 == 0 && ctx.Err() != nil {
			return worst
		}
	}
}
