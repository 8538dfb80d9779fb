package rules

import (
	"slices"

	"redline/internal/change"
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "clocksource", Section: "numa-cpu", Severity: doctor.Medium,
		Title:  "The clocksource is slow to read",
		Why:    "the server reads the clock for every command; xen, hpet and acpi_pm cannot be read in the vDSO, so each read is a system call (redis-server warns about xen at start-up)",
		Source: "RS syscheck.c (xen clocksource, slow-clocksource check)",
		Reads:  []string{"clocksource"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/sys/devices/system/clocksource/clocksource0/current_clocksource"},
		Check:  checkClocksource,
	})
}

const clocksourcePath = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

var slowClocks = []string{"xen", "hpet", "acpi_pm", "jiffies", "refined-jiffies"}

func checkClocksource(f *doctor.Facts) doctor.Result {
	cs := f.Host.Clocksource
	if cs == nil || cs.Current == "" {
		return doctor.Skip("the clocksource is not readable")
	}
	ev := doctor.Ev(clocksourcePath, cs.Current)
	aev := doctor.Ev("/sys/devices/system/clocksource/clocksource0/available_clocksource", joinWords(cs.Available))
	if !slices.Contains(slowClocks, cs.Current) {
		return doctor.Pass("clocksource %s", cs.Current).With(ev)
	}
	r := doctor.Fire("clocksource is %s: every clock read is a system call", cs.Current).With(ev, aev)
	if slices.Contains(cs.Available, "tsc") {
		fix := new(doctor.Fix).Set(change.KindFile, clocksourcePath, "tsc", cs.Current, "read the clock in the vDSO")
		fix.Advice = []string{"to keep it: clocksource=tsc on the kernel command line (needs a reboot); the kernel may fall back if it finds the TSC unstable"}
		return r.WithFix(fix)
	}
	return r.WithFix(&doctor.Fix{NeedsReboot: true, Advice: []string{"tsc is not available here: on a VM choose an instance type with a stable TSC (or kvm-clock)"}})
}

func joinWords(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}
