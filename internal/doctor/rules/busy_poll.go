package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "busy-poll", Section: "network", Severity: doctor.Info,
		Title:  "Busy polling is off (a candidate experiment)",
		Why:    "busy_read/busy_poll let a socket spin on the device queue instead of waiting for an interrupt (50 us suggested); it \"will increase power usage\" and its effect on Redis's epoll loop is undocumented",
		Source: "K-net busy_read, busy_poll; tuned network-latency profile",
		Reads:  []string{"sysctls"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/sys/net/core/busy_read", "/proc/sys/net/core/busy_poll"},
		Check:  checkBusyPoll,
	})
}

func checkBusyPoll(f *doctor.Facts) doctor.Result {
	r, rev, ok1 := f.SysctlInt("net.core.busy_read")
	p, pev, ok2 := f.SysctlInt("net.core.busy_poll")
	if !ok1 || !ok2 {
		return doctor.Skip("this kernel has no busy polling")
	}
	if r > 0 || p > 0 {
		return doctor.Pass("busy_read %d, busy_poll %d", r, p).With(rev, pev)
	}
	fix := new(doctor.Fix).
		Sysctl("net.core.busy_read", "50", rev.Value, "spin 50 us on reads").
		Sysctl("net.core.busy_poll", "50", pev.Value, "spin 50 us in poll/epoll")
	fix.Caution = "an experiment, not a known win: costs CPU and power; keep it only if redline lab shows lower latency"
	return doctor.Fire("busy polling is off").With(rev, pev).WithFix(fix)
}
