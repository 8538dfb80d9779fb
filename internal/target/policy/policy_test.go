package policy

import (
	"context"
	"strings"
	"testing"

	"redline/internal/change"
	"redline/internal/redisserver"
	"redline/internal/testutil"
)

func TestHostWide(t *testing.T) {
	for _, c := range []struct {
		kind   change.Kind
		target string
		netns  string
		want   bool
	}{
		{change.KindSysctl, "vm.overcommit_memory", "", true},
		{change.KindSysctl, "vm.overcommit_memory", "rl-1-srv", true},
		{change.KindSysctl, "net.core.somaxconn", "", true},
		{change.KindSysctl, "net.core.somaxconn", "rl-1-srv", false},
		{change.KindFile, "/sys/kernel/mm/transparent_hugepage/enabled", "rl-1-srv", true},
		{change.KindFile, "/proc/irq/24/smp_affinity_list", "", true},
		{change.KindFile, "/sys/class/net/veth0/queues/rx-0/rps_cpus", "rl-1-srv", false},
		{change.KindFile, "/sys/class/net/eth0/queues/rx-0/rps_cpus", "", true},
		{change.KindService, "irqbalance", "rl-1-srv", true},
		{change.KindChannels, "eth0", "", true},
		{change.KindRedisConfig, "hz", "", false},
		{change.KindAffinity, "1234", "", false},
	} {
		if got := HostWide(change.Change{Kind: c.kind, Target: c.target}, c.netns); got != c.want {
			t.Errorf("%s %s in %q: host-wide %v, want %v", c.kind, c.target, c.netns, got, c.want)
		}
	}
}

// TestGuard: the production-host guard's decisions, one line each.
func TestGuard(t *testing.T) {
	for _, c := range []struct {
		ssh     bool
		others  []string
		allowed bool
		off     bool
		want    string
	}{
		{true, []string{"pid 1"}, false, false, "whose other servers autotune does not see"},
		{false, nil, false, false, "no other redis-server runs on this host"},
		{false, []string{"pid 1"}, true, false, "ALLOWED by --allow-host-wide although 1 other"},
		{false, []string{"pid 1", "pid 2"}, false, true, "refused: 2 other redis-server(s) run on this host (pid 1, pid 2); the knobs are not tried (allow with --allow-host-wide)"},
	} {
		off, line := Guard(c.ssh, "autotune", c.others, c.allowed, "the knobs are not tried", "--allow-host-wide")
		if off != c.off || !strings.Contains(line, c.want) {
			t.Errorf("Guard(%v, %v, %v) = %v, %q; want %v, %q", c.ssh, c.others, c.allowed, off, line, c.off, c.want)
		}
	}
}

// TestBindAndPassword: a namespace's server binds there, a server host's
// to the given address or the ssh connection's, never to every
// interface; only a server the load reaches from another host gets a
// password of its own.
func TestBindAndPassword(t *testing.T) {
	for _, c := range []struct {
		ns, host, sshIP, given, want string
	}{
		{"10.9.0.2", "", "", "", "10.9.0.2"},
		{"", "", "", "", ""},
		{"", "h", "192.0.2.5", "", "192.0.2.5"},
		{"", "h", "192.0.2.5", "192.0.2.9", "192.0.2.9"},
	} {
		if got, err := Bind(c.ns, c.host, c.sshIP, c.given, "give one"); err != nil || got != c.want {
			t.Errorf("Bind(%+v) = %q, %v; want %q", c, got, err, c.want)
		}
	}
	if _, err := Bind("", "h", "", "", "give target.address"); err == nil || !strings.Contains(err.Error(), "give target.address") {
		t.Errorf("Bind with no address: %v", err)
	}
	if Password(false, "") != "" || Password(false, "pw") != "pw" || Password(true, "pw") != "pw" || len(Password(true, "")) < 16 {
		t.Error("Password: want a fresh one only for a remote server without one")
	}
	if got := StartConfig([]string{"maxclients 20"}); len(got) != 2 || got[0] != MaxClients || got[1] != "maxclients 20" {
		t.Errorf("StartConfig = %q; want maxclients first, the caller's line last", got)
	}
}

// TestStartClusterChecksEveryNode: a managed cluster started with an
// allocator runs every node with it preloaded, each node checked (the
// rule the lab now shares with autotune; the lab refused it before).
func TestStartClusterChecksEveryNode(t *testing.T) {
	testutil.Heavy(t)
	testutil.NeedTools(t, "redis-server", "/usr/lib/x86_64-linux-gnu/libjemalloc.so")
	spec := redisserver.Spec{Config: StartConfig(nil), Allocator: "jemalloc"}
	so, err := redisserver.SpecOptions(spec)
	if err != nil {
		t.Fatal(err)
	}
	c, err := StartCluster(context.Background(), redisserver.ClusterOptions{Primaries: 3, Server: so}, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	lib, _ := redisserver.AllocatorLib("jemalloc")
	for _, n := range c.Nodes() {
		if err := redisserver.CheckMapped(n.Pid(), lib); err != nil {
			t.Errorf("node %s: %v", n.Addr(), err)
		}
	}
}
