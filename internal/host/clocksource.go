package host

import "strings"

// The clocksource lives in /sys/devices/system/clocksource/clocksource0:
//
//	current_clocksource    tsc
//	available_clocksource  tsc kvm-clock acpi_pm
func readClocksource(r *reader) error {
	const dir = "/sys/devices/system/clocksource/clocksource0"
	cur, ok := r.str(dir + "/current_clocksource")
	if !ok {
		return nil
	}
	cs := &Clocksource{Current: cur}
	if avail, ok := r.str(dir + "/available_clocksource"); ok {
		cs.Available = strings.Fields(avail)
	}
	r.snap.Clocksource = cs
	return nil
}
