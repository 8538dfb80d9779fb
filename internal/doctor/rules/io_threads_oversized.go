package rules

import (
	"fmt"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "io-threads-oversized", Section: "numa-cpu", Severity: doctor.High,
		Title:  "io-threads is at least the CPUs the server may use",
		Why:    "I/O threads busy-spin; with as many threads as allowed CPUs they take the main thread's CPU and throughput drops sharply. Size from the cpuset, not nproc",
		Source: "GH redis/redis#13003; RS-conf io-threads (leave a spare core); K-cg cpuset.cpus.effective",
		Needs:  doctor.NeedRedis | doctor.NeedHost,
		Proves: []string{"CONFIG GET io-threads", "/proc/*/status Cpus_allowed_list|cgroup * cpuset.cpus.effective|/sys/devices/system/cpu/online"},
		Check:  checkIOThreadsOversized,
	})
}

func checkIOThreadsOversized(f *doctor.Facts) doctor.Result {
	n, ev, ok := f.ConfigInt("io-threads")
	if !ok {
		return doctor.Skip("this server has no io-threads (before 6.0)")
	}
	if f.RedisProcess() == nil {
		return doctor.Unchecked("the server's allowed CPUs are unknown: it is not on this host")
	}
	cpus, cev := f.AllowedCPUs()
	allowed := int64(cpus.Len())
	evs := append([]doctor.Evidence{ev}, cev...)
	if n < allowed || n <= 1 {
		return doctor.Pass("io-threads %d < %d allowed CPUs", n, allowed).With(evs...)
	}
	want := max(1, allowed-1)
	return doctor.Fire("io-threads %d but the server may use only %d CPU(s) (%s)", n, allowed, cpus.List()).With(evs...).
		WithFix(&doctor.Fix{NeedsRedisRestart: true, Advice: []string{
			fmt.Sprintf("set io-threads %d in redis.conf (at most allowed CPUs - 1) and restart the server; io-threads cannot be changed with CONFIG SET", want),
			"or give the server more CPUs (its affinity or its container's cpuset)",
		}})
}
