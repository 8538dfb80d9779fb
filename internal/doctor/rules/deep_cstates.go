package rules

import (
	"fmt"

	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "deep-cstates", Section: "numa-cpu", Severity: doctor.Low,
		Title:  "Deep idle states with long exit latency are enabled on the server's CPUs",
		Why:    "a CPU woken from a deep C-state takes its exit latency (often 100+ us) before it runs the request; disable the deep states on the CPUs that serve Redis",
		Source: "K-idle (per-state latency and disable); tuned latency-performance (force_latency)",
		Reads:  []string{"cpuidle"},
		Needs:  doctor.NeedHost | doctor.PerServer,
		Proves: []string{"/sys/devices/system/cpu/cpu*/cpuidle/state*"},
		Check:  checkCStates,
	})
}

// cstateBudget is the exit latency (us) above which an idle state costs a
// request noticeably.
const cstateBudget = 50

func checkCStates(f *doctor.Facts) doctor.Result {
	cpus, allowed := f.AllowedCPUs()
	fix := new(doctor.Fix)
	var evs []doctor.Evidence
	any := false
	for _, c := range f.Host.CPU.CPUs {
		if !c.Online || !cpus.Contains(c.ID) {
			continue
		}
		for _, s := range c.Idle {
			any = true
			if s.Disabled || s.LatencyUs == nil || *s.LatencyUs <= cstateBudget {
				continue
			}
			path := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpuidle/state%d/disable", c.ID, s.Index)
			if len(evs) < 4 {
				evs = append(evs, doctor.Ev(fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpuidle/state%d (%s) latency", c.ID, s.Index, s.Name), fmt.Sprintf("%d us", *s.LatencyUs)))
			}
			fix.Set(change.KindFile, path, "1", "0", "keep the CPU out of a slow-to-wake state")
		}
	}
	if !any {
		return doctor.Skip("no cpuidle states (common in VMs)")
	}
	if len(fix.Changes) == 0 {
		return doctor.Pass("no enabled idle state exits slower than %d us on the server's CPUs", cstateBudget).
			With(append(allowed, doctor.Ev("/sys/devices/system/cpu/cpu*/cpuidle/state*/latency", fmt.Sprintf("%d us at most (enabled states)", maxExit(f, cpus))))...)
	}
	fix.Caution = "costs power and can lower turbo headroom; keep it if redline lab shows the gain"
	return doctor.Fire("%d enabled idle state(s) with exit latency above %d us on the server's CPUs", len(fix.Changes), cstateBudget).With(evs...).WithFix(fix)
}

// maxExit is the longest exit latency of an enabled idle state of cpus.
func maxExit(f *doctor.Facts, cpus host.CPUSet) int64 {
	var worst int64
	for _, c := range f.Host.CPU.CPUs {
		if !c.Online || !cpus.Contains(c.ID) {
			continue
		}
		for _, s := range c.Idle {
			if !s.Disabled && s.LatencyUs != nil && *s.LatencyUs > worst {
				worst = *s.LatencyUs
			}
		}
	}
	return worst
}
