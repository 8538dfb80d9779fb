package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "zone-reclaim", Section: "numa-cpu", Severity: doctor.Low,
		Title:  "zone_reclaim_mode is on",
		Why:    "with zone reclaim the kernel reclaims (drops cache, writes back) on the local node before allocating on another; it \"should be left disabled\" for cache-like workloads",
		Source: "K-vm zone_reclaim_mode",
		Reads:  []string{"sysctls"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/sys/vm/zone_reclaim_mode"},
		Check:  checkZoneReclaim,
	})
}

func checkZoneReclaim(f *doctor.Facts) doctor.Result {
	v, ev, ok := f.SysctlInt("vm.zone_reclaim_mode")
	if !ok {
		return doctor.Skip("this kernel has no zone_reclaim_mode")
	}
	if v == 0 {
		return doctor.Pass("vm.zone_reclaim_mode 0").With(ev)
	}
	return doctor.Fire("vm.zone_reclaim_mode is %d", v).With(ev).
		WithFix(new(doctor.Fix).Sysctl("vm.zone_reclaim_mode", "0", ev.Value, "allocate on another node rather than reclaim"))
}
