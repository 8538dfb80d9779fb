package host

import "fmt"

// cpuidle states live in /sys/devices/system/cpu/cpuN/cpuidle/stateK:
//
//	name       C1E
//	latency    10      (exit latency, µs)
//	residency  20      (target residency, µs)
//	disable    0
//
// and the driver in /sys/devices/system/cpu/cpuidle/current_driver
// ("intel_idle", "haltpoll", "psci_idle").
func readCPUIdle(r *reader) error {
	const base = "/sys/devices/system/cpu"
	t := &r.snap.CPU
	t.IdleDriver, _ = r.str(base + "/cpuidle/current_driver")
	t.IdleGovernor, _ = r.str(base + "/cpuidle/current_governor")
	if t.IdleGovernor == "" {
		t.IdleGovernor, _ = r.str(base + "/cpuidle/current_governor_ro")
	}
	for i := range t.CPUs {
		c := &t.CPUs[i]
		if !c.Online {
			continue
		}
		dir := fmt.Sprintf("%s/cpu%d/cpuidle", base, c.ID)
		for _, k := range numbered(r.dir(dir), "state") {
			c.Idle = append(c.Idle, readIdleState(r, fmt.Sprintf("%s/state%d", dir, k), k))
		}
	}
	return nil
}

func readIdleState(r *reader, dir string, k int) IdleState {
	st := IdleState{Index: k}
	st.Name, _ = r.str(dir + "/name")
	st.LatencyUs, _ = r.int64(dir + "/latency")
	st.ResidentUs, _ = r.int64(dir + "/residency")
	if d, ok := r.int(dir + "/disable"); ok {
		st.Disabled = *d != 0
	}
	return st
}
