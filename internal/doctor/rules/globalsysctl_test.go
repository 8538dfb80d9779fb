package rules

import (
	"strings"
	"testing"

	"redline/internal/doctor"
)

// With several redis-servers, none chosen, a rule that is not PerNetNS
// runs once, and Facts.RedisProcess falls back to the first server. When
// that server has a network namespace of its own, the host-wide net.core
// sysctls (busy_poll, rps_sock_flow_entries, netdev_budget: the initial
// namespace's only) are absent there: busy-poll said "this kernel has no
// busy polling" on a host that has it. They are read from the host,
// whichever server comes first. (x86-2socket-mlx5, servers reordered so
// the container's pid 40001 is first.)
func TestGlobalNetSysctlsReadFromTheHost(t *testing.T) {
	f := treeFacts(t, x86Tree)
	ps := f.Host.Processes
	ps[0], ps[1] = ps[1], ps[0]
	if ps[0].PID != 40001 || ps[0].NetNSIsInspector || ps[0].NetSysctls == nil {
		t.Fatalf("first server: pid %d, inspector's netns %v, %d netns sysctls", ps[0].PID, ps[0].NetNSIsInspector, len(ps[0].NetSysctls))
	}
	if _, ok := ps[0].NetSysctls["net.core.busy_poll"]; ok {
		t.Fatal("the container's namespace lists busy_poll: the test shows nothing")
	}
	for _, tc := range []struct{ rule, source string }{
		{"busy-poll", "/proc/sys/net/core/busy_poll"},
		{"rfs", "/proc/sys/net/core/rps_sock_flow_entries"},
	} {
		fd := runOne(t, f, tc.rule)
		if fd.Status == doctor.NotApplicable || fd.Status == doctor.NotChecked {
			t.Errorf("%s: %s %s%s", tc.rule, fd.Status, fd.Message, fd.Reason)
			continue
		}
		found := false
		for _, ev := range fd.Evidence {
			if ev.Source == tc.source && !strings.Contains(ev.Note, "network namespace") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no host evidence %s: %+v", tc.rule, tc.source, fd.Evidence)
		}
	}
	// somaxconn is per namespace: still the container's for its server.
	f.Pid = 40001
	if v, ev, _ := f.Sysctl("net.core.somaxconn"); !strings.Contains(ev.Note, "pid 40001") {
		t.Errorf("somaxconn %s from %+v, want the container's", v, ev)
	}
}
