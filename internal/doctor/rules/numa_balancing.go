package rules

import (
	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "numa-balancing", Section: "numa-cpu", Severity: doctor.High,
		Title:  "Automatic NUMA balancing is on for a multi-node host",
		Why:    "NUMA balancing unmaps pages to trap faults and migrates them; on GitLab's Redis hosts the hinting faults and migrations saturated the main thread until it was turned off",
		Source: "GL (gitlab-com/gl-infra production#7660); K-kern numa_balancing; tuned network-latency",
		Reads:  []string{"sysctls", "numa", "vmstat"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/sys/kernel/numa_balancing"},
		Check:  checkNUMABalancing,
	})
}

func checkNUMABalancing(f *doctor.Facts) doctor.Result {
	v, ev, ok := f.SysctlInt("kernel.numa_balancing")
	if r, missing := noTopology(f); missing && !ok {
		return r
	}
	if !ok {
		return absentSysctl(f, "kernel.numa_balancing", "this kernel has no NUMA balancing (built without CONFIG_NUMA_BALANCING)")
	}
	if r, missing := noTopology(f); missing {
		return r
	}
	if !f.MultiNode() {
		return doctor.Skip("one NUMA node")
	}
	if v == 0 {
		return doctor.Pass("kernel.numa_balancing 0").With(ev)
	}
	mig, sampled, _ := f.HostDelta(func(s *host.Snapshot) (uint64, bool) {
		if s == nil || s.VMStat.NUMAPagesMigrated == nil {
			return 0, false
		}
		return *s.VMStat.NUMAPagesMigrated, true
	})
	mev := doctor.Evidence{Source: "/proc/vmstat numa_pages_migrated", Value: u64(mig), Note: window(sampled, "since boot")}
	r := doctor.Fire("kernel.numa_balancing is %d on a %d-node host; %d pages migrated %s", v, len(f.Nodes()), mig, window(sampled, "since boot")).With(ev, mev).
		WithFix(new(doctor.Fix).Sysctl("kernel.numa_balancing", "0", ev.Value, "stop hinting faults and page migrations under the server"))
	if !sampled || mig == 0 {
		r = r.WithSeverity(doctor.Medium)
	}
	return r
}
