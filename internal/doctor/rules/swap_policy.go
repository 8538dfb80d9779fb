package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "swap-policy", Section: "memory", Severity: doctor.Low,
		Title:  "The host has no swap",
		Why:    "Redis's admin guide asks for swap sized like RAM, so that a memory spike shows up as latency you can see instead of an OOM kill",
		Source: "RD-adm (swap); K-vm swappiness (default 60); ARM (swappiness 1)",
		Reads:  []string{"sysctls", "meminfo"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/meminfo SwapTotal", "/proc/sys/vm/swappiness"},
		Check:  checkSwapPolicy,
	})
}

func checkSwapPolicy(f *doctor.Facts) doctor.Result {
	m := f.Host.Memory
	if m.SwapTotal == nil {
		return doctor.Skip("/proc/meminfo has no SwapTotal")
	}
	ev := doctor.Ev("/proc/meminfo SwapTotal", doctor.Bytes(*m.SwapTotal))
	sw, sev, _ := f.SysctlInt("vm.swappiness")
	if *m.SwapTotal > 0 {
		return doctor.Pass("%s of swap, swappiness %d", doctor.Bytes(*m.SwapTotal), sw).With(ev, sev)
	}
	return doctor.Fire("no swap: when memory runs out the OOM killer ends the server without warning").With(ev, sev).
		WithFix(&doctor.Fix{NeedsRoot: true, Advice: []string{
			"fallocate -l 8G /swapfile && chmod 600 /swapfile && mkswap /swapfile && swapon /swapfile (undo: swapoff /swapfile && rm /swapfile)",
			"with swap on, set vm.swappiness low (1-10) so the server is swapped only under real pressure, and watch redis-swapped",
		}})
}
