package host

import (
	"fmt"
	"strconv"
	"strings"
)

// cpufreq policies live in /sys/devices/system/cpu/cpufreq/policyN:
//
//	affected_cpus                  0 1 2 3     (space-separated, not a cpulist)
//	scaling_driver                 intel_pstate
//	scaling_governor               powersave
//	scaling_available_governors    performance powersave
//	scaling_cur_freq               2100000     (kHz)
//	scaling_min_freq / scaling_max_freq / cpuinfo_min_freq / cpuinfo_max_freq
//	energy_performance_preference  balance_performance
func readCPUFreq(r *reader) error {
	const base = "/sys/devices/system/cpu/cpufreq"
	governorOf := map[int]string{}
	for _, n := range numbered(r.dir(base), "policy") {
		p := readPolicy(r, fmt.Sprintf("%s/policy%d", base, n))
		p.Name = fmt.Sprintf("policy%d", n)
		for _, c := range p.CPUs.CPUs() {
			governorOf[c] = p.Governor
		}
		r.snap.CPU.Freq = append(r.snap.CPU.Freq, p)
	}
	for i := range r.snap.CPU.CPUs {
		r.snap.CPU.CPUs[i].Governor = governorOf[r.snap.CPU.CPUs[i].ID]
	}
	return nil
}

func readPolicy(r *reader, dir string) FreqPolicy {
	var p FreqPolicy
	if s, ok := r.str(dir + "/affected_cpus"); ok {
		cpus, err := parseCPUWords(s)
		if err != nil {
			r.fail(&ParseError{Path: dir + "/affected_cpus", Line: 1, Err: err})
		}
		p.CPUs = cpus
	}
	p.Driver, _ = r.str(dir + "/scaling_driver")
	p.Governor, _ = r.str(dir + "/scaling_governor")
	if s, ok := r.str(dir + "/scaling_available_governors"); ok {
		p.Governors = strings.Fields(s)
	}
	p.CurKHz, _ = r.int64(dir + "/scaling_cur_freq")
	p.MinKHz, _ = r.int64(dir + "/scaling_min_freq")
	p.MaxKHz, _ = r.int64(dir + "/scaling_max_freq")
	p.HWMinKHz, _ = r.int64(dir + "/cpuinfo_min_freq")
	p.HWMaxKHz, _ = r.int64(dir + "/cpuinfo_max_freq")
	p.EnergyPerfP, _ = r.str(dir + "/energy_performance_preference")
	return p
}

// parseCPUWords reads space-separated CPU numbers ("0 1 2 3").
func parseCPUWords(s string) (CPUSet, error) {
	var set CPUSet
	for _, f := range strings.Fields(s) {
		c, err := strconv.Atoi(f)
		if err != nil || c < 0 || c >= MaxCPUs {
			return set, fmt.Errorf("%q is not a CPU number", f)
		}
		set.Add(c)
	}
	return set, nil
}
