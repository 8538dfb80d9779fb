package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "single-core-pin", Section: "numa-cpu", Severity: doctor.Medium,
		Title:  "A persistent server is pinned to one CPU",
		Why:    "BGSAVE and BGREWRITEAOF children inherit the affinity and compete with the main thread; they \"must never run on the same core as the main event loop\"",
		Source: "RD-lat (fork and affinity); RS-conf bgsave-cpulist",
		Needs:  doctor.NeedRedis | doctor.NeedRedisProcess,
		Proves: []string{"/proc/*/status Cpus_allowed_list|cgroup * cpuset.cpus.effective"},
		Check:  checkSingleCorePin,
	})
}

func checkSingleCorePin(f *doctor.Facts) doctor.Result {
	cpus, evs := f.AllowedCPUs()
	if cpus.Len() != 1 {
		return doctor.Pass("the server may use %d CPUs", cpus.Len()).With(evs...)
	}
	if f.Redis.Config == nil {
		return doctor.Unchecked("CONFIG GET failed: persistence settings unknown")
	}
	save, sev, _ := f.Config("save")
	aof, aev, _ := f.Config("appendonly")
	evs = append(evs, sev, aev)
	if !f.Redis.Config.Persistent() {
		return doctor.Pass("pinned to CPU %s but persistence is off", cpus.List()).With(evs...)
	}
	return doctor.Fire("pinned to CPU %s with persistence on (save %q, appendonly %s): forks share the main thread's core", cpus.List(), save, aof).With(evs...).
		WithFix(&doctor.Fix{NeedsRedisRestart: true, Advice: []string{
			"widen the server's affinity to include a second core (taskset -a -p -c LIST PID), keeping the main thread on its own core with server_cpulist",
			"or set bgsave-cpulist and aof-rewrite-cpulist (6.2+) to another core in redis.conf and restart",
		}})
}
