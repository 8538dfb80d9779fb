package doctor

import "testing"

func TestMissingProof(t *testing.T) {
	r := Rule{ID: "x", Proves: []string{"/sys/devices/system/cpu/cpufreq/policy*/scaling_governor", "cgroup * cpu.max|CONFIG GET save"}}
	for _, tc := range []struct {
		srcs []string
		want string
	}{
		{[]string{"/sys/devices/system/cpu/cpufreq/policy12/scaling_governor", "cgroup /system.slice/redis.service cpu.max"}, ""},
		{[]string{"/sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "CONFIG GET save"}, ""},
		// The allowed CPUs are no evidence of a governor.
		{[]string{"/proc/42/status Cpus_allowed_list", "CONFIG GET save"}, r.Proves[0]},
		{[]string{"/sys/devices/system/cpu/cpufreq/policy0/scaling_governor"}, r.Proves[1]},
		{[]string{"/sys/devices/system/cpu/cpufreq/policy0/scaling_governor_x", "CONFIG GET save"}, r.Proves[0]},
	} {
		var evs []Evidence
		for _, s := range tc.srcs {
			evs = append(evs, Evidence{Source: s})
		}
		if got := MissingProof(r, evs); got != tc.want {
			t.Errorf("%q: missing %q, want %q", tc.srcs, got, tc.want)
		}
	}
	ok := Result{Status: OK, Message: "fine", Evidence: []Evidence{{Source: "/proc/42/status Cpus_allowed_list"}}}
	if got := withoutEvidence(r, ok); got.Status != NotChecked {
		t.Errorf("ok with another claim's evidence: %s", got.Status)
	}
}
