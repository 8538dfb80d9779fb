package rules

import (
	"fmt"

	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "cpu-governor", Section: "numa-cpu", Severity: doctor.Medium,
		Title:  "CPUs that serve Redis are not at the performance governor",
		Why:    "a single-threaded server is latency-bound on one core; benchmarks ask for \"the highest possible fixed frequency\" and powersave/schedutil ramp up late",
		Source: "RD-bench; K-freq (performance governor)",
		Reads:  []string{"cpufreq"},
		Needs:  doctor.NeedHost | doctor.PerServer,
		Proves: []string{"/sys/devices/system/cpu/cpufreq/policy*/scaling_governor"},
		Check:  checkGovernor,
	})
}

func checkGovernor(f *doctor.Facts) doctor.Result {
	if len(f.Host.CPU.Freq) == 0 {
		return doctor.Skip("no cpufreq (common in VMs): the hypervisor sets the frequency")
	}
	cpus, evs := f.AllowedCPUs()
	fix := new(doctor.Fix)
	var slow []string
	checked := 0
	for _, p := range f.Host.CPU.Freq {
		if p.CPUs.Intersect(cpus).IsEmpty() || p.Governor == "" {
			continue
		}
		checked++
		if p.Governor == "performance" {
			evs = append(evs, doctor.Ev(fmt.Sprintf("/sys/devices/system/cpu/cpufreq/%s/scaling_governor", p.Name), p.Governor))
			continue
		}
		slow = append(slow, fmt.Sprintf("%s=%s", p.Name, p.Governor))
		evs = append(evs, doctor.Ev(fmt.Sprintf("/sys/devices/system/cpu/cpufreq/%s/scaling_governor", p.Name), p.Governor))
		if hasGovernor(p, "performance") {
			fix.Set(change.KindFile, fmt.Sprintf("/sys/devices/system/cpu/cpufreq/%s/scaling_governor", p.Name), "performance", p.Governor, "run at the highest frequency")
		}
	}
	if checked == 0 {
		return doctor.Unchecked("no cpufreq policy of the server's CPUs %s reports a governor (%d policies read)", cpus.List(), len(f.Host.CPU.Freq)).With(evs...)
	}
	if len(slow) == 0 {
		return doctor.Pass("the server's CPUs run the performance governor").With(evs...)
	}
	fix.Caution = "costs power; keep it if redline lab shows the gain"
	return doctor.Fire("%d cpufreq policies of the server's CPUs are not at performance (%s)", len(slow), slow[0]).With(evs...).WithFix(fix)
}

func hasGovernor(p host.FreqPolicy, g string) bool {
	if len(p.Governors) == 0 {
		return true
	}
	for _, x := range p.Governors {
		if x == g {
			return true
		}
	}
	return false
}
