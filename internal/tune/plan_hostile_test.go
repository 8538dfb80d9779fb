package tune

import (
	"strings"
	"testing"
)

// Plans someone else wrote (issue 24, items 2, 3 and 12): each one was
// accepted and applied as root, through `tune apply` and the session,
// before the allow-lists; each is now refused whole, naming the change.
func TestParsePlanRefusesHostileChanges(t *testing.T) {
	for _, tc := range []struct{ change, want string }{
		{`{kind: service, target: ssh.service, value: inactive}`, "not one tune starts or stops"},
		{`{kind: service, target: debug-shell.service, value: active}`, "not one tune starts or stops"},
		{`{kind: service, target: "modprobe@dummy.service", value: active}`, "not one tune starts or stops"},
		{`{kind: redis-config, target: protected-mode, value: "no"}`, "opens the server"},
		{`{kind: redis-config, target: bind, value: 0.0.0.0}`, "opens the server"},
		{`{kind: redis-config, target: requirepass, value: mine}`, "a password"},
		{`{kind: redis-config, target: masterauth, value: mine}`, "a password"},
		{`{kind: redis-config, target: DIR, value: /etc}`, "names a directory"},
		{`{kind: redis-config, target: dbfilename, value: passwd}`, "names a file"},
		{`{kind: redis-config, target: cluster-announce-ip, value: 1.2.3.4}`, "address others"},
		{`{kind: redis-config, target: enable-debug-command, value: "yes"}`, "enables commands"},
		{`{kind: sysctl, target: vm.mmap_min_addr, value: "0"}`, "never weakens"},
		{`{kind: sysctl, target: vm.unprivileged_userfaultfd, value: "1"}`, "never weakens"},
		{`{kind: sysctl, target: net.core.bpf_jit_harden, value: "0"}`, "never weakens"},
		{`{kind: sysctl, target: net.ipv4.ip_unprivileged_port_start, value: "0"}`, "never weakens"},
		{`{kind: sysctl, target: net.ipv4.ip_forward, value: "1"}`, "never weakens"},
		{`{kind: sysctl, target: net.ipv4.conf.all.route_localnet, value: "1"}`, "never weakens"},
		{`{kind: sysctl, target: net/ipv4/conf/eth0.10/forwarding, value: "1"}`, "never weakens"},
		{`{kind: sysctl, target: kernel.sched_rt_runtime_us, value: "-1"}`, "never weakens"},
		{`{kind: sysctl, target: fs.file-max, value: "64"}`, "at least"},
		{`{kind: affinity, target: "1", value: "0"}`, "redis-server only"},
		{`{kind: affinity, target: "1", value: "0", guard: comm=sshd}`, "redis-server only"},
	} {
		plan := "version: 1\nredis: {addr: 127.0.0.1:6379}\nchanges:\n  - {kind: sysctl, target: net.core.somaxconn, value: \"4096\"}\n  - " + tc.change + "\n"
		_, err := ParsePlan([]byte(plan), ".yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ParsePlan = %v, want an error with %q", tc.change, err, tc.want)
		}
	}
}

// What redline's own planners write stays accepted.
func TestParsePlanAcceptsWhatRedlinePlans(t *testing.T) {
	plan := `version: 1
redis: {addr: 127.0.0.1:6379}
changes:
  - {kind: service, target: irqbalance, value: inactive}
  - {kind: redis-config, target: hz, value: "100"}
  - {kind: redis-config, target: appendfsync, value: everysec}
  - {kind: sysctl, target: net.ipv4.tcp_max_syn_backlog, value: "8192"}
  - {kind: sysctl, target: net/ipv4/conf/eth0.10/rp_filter, value: "2"}
  - {kind: sysctl, target: fs.file-max, value: "2097152"}
  - {kind: affinity, target: "42", value: "0-1", guard: comm=redis-server}
`
	if _, err := ParsePlan([]byte(plan), ".yaml"); err != nil {
		t.Fatal(err)
	}
}
