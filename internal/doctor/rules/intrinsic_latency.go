package rules

import (
	"time"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "intrinsic-latency", Section: "numa-cpu", Severity: doctor.Low,
		Title:  "The host itself stalls runnable threads",
		Why:    "intrinsic latency is the longest a busy thread waited for the CPU with no I/O at all: a floor under every request's latency (115 us on a good server, 9.7 ms on a loaded VM)",
		Source: "RD-lat (redis-cli --intrinsic-latency); RS latency.c (fast-command advice)",
		Needs:  doctor.NeedHost,
		Proves: []string{"measured intrinsic latency*"},
		Check:  checkIntrinsic,
	})
}

func checkIntrinsic(f *doctor.Facts) doctor.Result {
	if f.IntrinsicLatency == nil {
		return doctor.Unchecked("not measured: run redline doctor --intrinsic-latency 5s (saturates one core for that long)")
	}
	d := *f.IntrinsicLatency
	ev := doctor.Ev("measured intrinsic latency (max)", d)
	fix := &doctor.Fix{Advice: []string{
		"find what preempts: other busy processes, CPU steal on a VM (top's st), deep C-states (deep-cstates), a powersave governor (cpu-governor)",
		"isolate the server's cores (isolcpus/nohz_full on the kernel command line, needs a reboot) or move to a quieter host",
	}}
	switch {
	case d >= 5*time.Millisecond:
		return doctor.Fire("a busy thread was held off the CPU for %s", d).With(ev).WithFix(fix).WithSeverity(doctor.Medium)
	case d >= 500*time.Microsecond:
		return doctor.Fire("a busy thread was held off the CPU for %s", d).With(ev).WithFix(fix)
	}
	return doctor.Pass("intrinsic latency %s", d).With(ev)
}
