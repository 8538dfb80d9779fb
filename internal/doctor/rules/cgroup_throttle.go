package rules

import (
	"fmt"

	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "cgroup-cpu-throttle", Section: "numa-cpu", Severity: doctor.Medium,
		Title:  "The server's cgroup is CPU-throttled",
		Why:    "with a CPU quota the group may use at most quota per period; once spent, every thread waits for the next period (up to 100 ms): latency spikes with no CPU shortage",
		Source: "K-cg cpu.max, cpu.stat nr_throttled",
		Reads:  []string{"proc/PID/cgroup"},
		Needs:  doctor.NeedHost | doctor.NeedRedisProcess,
		Proves: []string{"cgroup * cpu.max", "cgroup * cpu.stat nr_throttled"},
		Check:  checkThrottle,
	})
}

func checkThrottle(f *doctor.Facts) doctor.Result {
	p := f.RedisProcess()
	cg := p.Cgroup
	if cg == nil || cg.CPUQuotaUs == nil {
		return doctor.Skip("no CPU quota on the server's cgroup")
	}
	q := doctor.Ev("cgroup "+cg.Path+" cpu.max", fmt.Sprintf("%d %d", *cg.CPUQuotaUs, deref(cg.CPUPeriodUs)))
	n, sampled, ok := f.HostDelta(func(s *host.Snapshot) (uint64, bool) {
		if s == nil {
			return 0, false
		}
		for _, x := range s.Processes {
			if x.PID == p.PID && x.Cgroup != nil && x.Cgroup.NrThrottled != nil {
				return *x.Cgroup.NrThrottled, true
			}
		}
		return 0, false
	})
	if !ok {
		return doctor.Unchecked("cpu.stat is not readable")
	}
	tev := doctor.Evidence{Source: "cgroup " + cg.Path + " cpu.stat nr_throttled", Value: u64(n), Note: window(sampled, "since the cgroup was created")}
	if n == 0 {
		return doctor.Pass("quota set, never throttled").With(q, tev)
	}
	return doctor.Fire("the server's cgroup was throttled %d times %s", n, window(sampled, "since it was created")).With(q, tev).
		WithFix(&doctor.Fix{Advice: []string{"raise or remove the CPU limit through the orchestrator (Kubernetes: resources.limits.cpu; systemd: CPUQuota=)", "or use cpuset pinning instead of a quota"}})
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
