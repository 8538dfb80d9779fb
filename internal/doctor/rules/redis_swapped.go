package rules

import (
	"fmt"

	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "redis-swapped", Section: "memory", Severity: doctor.High,
		Title:  "Part of the server's memory is swapped out",
		Why:    "a request that touches a swapped page blocks the single main thread on disk I/O",
		Source: "RD-lat (latency induced by swapping)",
		Needs:  doctor.NeedRedisProcess,
		Proves: []string{"/proc/*/status VmSwap"},
		Check:  checkSwapped,
	})
}

func checkSwapped(f *doctor.Facts) doctor.Result {
	p := f.RedisProcess()
	if p.VmSwap == nil {
		return doctor.Unchecked("VmSwap is not readable")
	}
	ev := doctor.Ev(fmt.Sprintf("/proc/%d/status VmSwap", p.PID), doctor.Bytes(*p.VmSwap))
	if *p.VmSwap < 1<<20 {
		return doctor.Pass("%s swapped", doctor.Bytes(*p.VmSwap)).With(ev)
	}
	in, sampled, _ := f.HostDelta(func(s *host.Snapshot) (uint64, bool) {
		if s == nil || s.VMStat.PswpIn == nil {
			return 0, false
		}
		return *s.VMStat.PswpIn, true
	})
	iev := doctor.Evidence{Source: "/proc/vmstat pswpin", Value: u64(in), Note: window(sampled, "since boot")}
	fix := &doctor.Fix{Advice: []string{"lower memory pressure: set maxmemory below the free memory, move other processes away",
		"if it must never swap: run it in a cgroup with memory.swap.max=0"}}
	r := doctor.Fire("%s of the server is swapped out; %d pages swapped in %s", doctor.Bytes(*p.VmSwap), in, window(sampled, "since boot")).With(ev, iev).WithFix(fix)
	if !sampled || in == 0 {
		r = r.WithSeverity(doctor.Low)
	}
	return r
}
