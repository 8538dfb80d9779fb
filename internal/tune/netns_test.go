package tune

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"redline/internal/change"
	"redline/internal/netns"
	"redline/internal/redisserver"
	"redline/internal/redistest"
)

// nsSomaxconn reads somaxconn inside namespace ns.
func nsSomaxconn(t *testing.T, ns string) string {
	t.Helper()
	var v string
	err := netns.Do(ns, func() error {
		b, err := OSFS{Root: "/"}.ReadFile("/proc/sys/net/core/somaxconn")
		v = strings.TrimSpace(string(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// killedNetnsApply applies somaxconn = the host's own value inside a new
// namespace (whose value differs) and stops dead after the write is
// recorded, as a lab killed with SIGKILL mid-variant does. It returns the
// namespace, the host's value, the namespace's old value and the journal.
func killedNetnsApply(t *testing.T) (ns, host, nsOld, state string) {
	t.Helper()
	ns, _ = testNetns(t)
	host = guardFile(t, "/proc/sys/net/core/somaxconn")
	nsOld = fmt.Sprint(atoi(t, host) - 1)
	if err := netns.Do(ns, func() error {
		return OSFS{Root: "/"}.WriteFile("/proc/sys/net/core/somaxconn", []byte(nsOld+"\n"))
	}); err != nil {
		t.Fatal(err)
	}
	s := LiveSystem()
	s.NetNS = ns
	t.Cleanup(func() { s.Close() })
	p := &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: host}}}
	state = t.TempDir()
	_, err := Apply(bg, s, p, ApplyOptions{StateDir: state, hook: func(step int, at phase) bool { return at == afterDone }})
	if err != errKilled {
		t.Fatalf("apply: %v, want it stopped dead", err)
	}
	if got := nsSomaxconn(t, ns); got != host {
		t.Fatalf("somaxconn in %s is %s after apply, want %s", ns, got, host)
	}
	return ns, host, nsOld, state
}

// Issue 10 item 1: the journal records the namespace, and a rollback run
// from the host after the applying process died restores the namespace's
// value there, leaving the host's own (equal to what was set in the
// namespace) alone.
func TestHostNetnsRollbackFromHost(t *testing.T) {
	requireHostWrites(t)
	ns, host, nsOld, state := killedNetnsApply(t)
	st, err := Journaled(bg, StatusOptions{StateDir: state})
	if err != nil || st.Pending() != 1 || st.Sessions[0].Changes[0].Status != StatusApplied {
		t.Fatalf("status from the host: %+v %v", st, err)
	}
	if ref := st.Sessions[0].Info.NetNS; ref == nil || ref.Enter != ns || ref.Ino == 0 {
		t.Errorf("the journal's namespace: %+v, want %s with its inode", ref, ns)
	}
	recs, err := readRecords(state)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Op == opIntent && (r.NetNS == nil || r.NetNS.Enter != ns) {
			t.Errorf("intent %d records namespace %+v, want %s", r.Seq, r.NetNS, ns)
		}
	}
	rb, err := Rollback(bg, RollbackOptions{StateDir: state})
	if err != nil || !rb.Archived || rb.Count(StatusRestored) != 1 || rb.Outcomes[0].Reason != "" {
		t.Fatalf("rollback: %+v %v", rb, err)
	}
	if got := nsSomaxconn(t, ns); got != nsOld {
		t.Errorf("somaxconn in %s is %s after rollback, want %s", ns, got, nsOld)
	}
	if got := readLive(t, "/proc/sys/net/core/somaxconn"); got != host {
		t.Errorf("host somaxconn is %s after rollback, want its own %s", got, host)
	}
}

// Issue 10 item 1: when the namespace was deleted since, its changes are
// gone: the rollback completes, archives, and writes nothing on the host.
func TestHostNetnsGoneAtRollback(t *testing.T) {
	requireHostWrites(t)
	ns, host, _, state := killedNetnsApply(t)
	if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns del: %v %s", err, out)
	}
	st, err := Journaled(bg, StatusOptions{StateDir: state})
	if err != nil || st.Sessions[0].Changes[0].Status != StatusGone {
		t.Fatalf("status: %+v %v", st, err)
	}
	rb, err := Rollback(bg, RollbackOptions{StateDir: state})
	if err != nil || !rb.Archived || rb.Count(StatusGone) != 1 || !strings.Contains(rb.Outcomes[0].Reason, "gone") {
		t.Fatalf("rollback: %+v %v", rb, err)
	}
	if got := readLive(t, "/proc/sys/net/core/somaxconn"); got != host {
		t.Errorf("host somaxconn is %s after rollback, want its own %s", got, host)
	}
}

// Only what lives in a namespace is journaled with it: net.* sysctls,
// Redis settings and NIC channels; IRQs, THP and vm.* are the host's.
func TestNSBound(t *testing.T) {
	cases := map[change.Change]bool{
		{Kind: change.KindSysctl, Target: "net.core.somaxconn"}:                        true,
		{Kind: change.KindSysctl, Target: "net/ipv4/conf/eth0.10/rp_filter"}:           true,
		{Kind: change.KindRedisConfig, Target: "hz"}:                                   true,
		{Kind: change.KindChannels, Target: "eth0"}:                                    true,
		{Kind: change.KindSysctl, Target: "vm.overcommit_memory"}:                      false,
		{Kind: change.KindFile, Target: "/proc/irq/24/smp_affinity_list"}:              false,
		{Kind: change.KindFile, Target: "/sys/kernel/mm/transparent_hugepage/enabled"}: false,
		{Kind: change.KindAffinity, Target: "42"}:                                      false,
	}
	for c, want := range cases {
		if got := nsBound(c); got != want {
			t.Errorf("nsBound(%s) = %v, want %v", c.Key(), got, want)
		}
	}
}

// Issue 10 items 1 and 3, as the lab meets them: an apply in a namespace
// (a net.* sysctl and a setting of a Redis server running there) is killed,
// the server dies with it, and "tune rollback" from the host restores the
// namespace's sysctl there, reports the server's setting gone, completes
// and archives; a second rollback has nothing left to do.
func TestHostNetnsKilledLabRollback(t *testing.T) {
	requireHostWrites(t)
	ns, _ := testNetns(t)
	run(t, "ip", "-n", ns, "link", "set", "lo", "up")
	srv := redistest.StartWith(t, redisserver.Options{NetNS: ns})
	host := guardFile(t, "/proc/sys/net/core/somaxconn")
	nsOld := fmt.Sprint(atoi(t, host) - 1)
	if err := netns.Do(ns, func() error {
		return OSFS{Root: "/"}.WriteFile("/proc/sys/net/core/somaxconn", []byte(nsOld+"\n"))
	}); err != nil {
		t.Fatal(err)
	}
	s := LiveSystem()
	s.NetNS = ns
	t.Cleanup(func() { s.Close() })
	p := &Plan{Version: 1, Redis: &PlanRedis{Addr: srv.Addr()}, Changes: []change.Change{
		{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: host},
		{Kind: change.KindRedisConfig, Target: "hz", Value: "42"},
	}}
	state := t.TempDir()
	_, err := Apply(bg, s, p, ApplyOptions{StateDir: state, hook: func(step int, at phase) bool { return step == 2 && at == afterDone }})
	if err != errKilled {
		t.Fatalf("apply: %v, want it stopped dead", err)
	}
	s.Close()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	rb, err := Rollback(bg, RollbackOptions{StateDir: state})
	if err != nil || !rb.Archived || rb.Count(StatusRestored) != 1 || rb.Count(StatusGone) != 1 {
		t.Fatalf("rollback from the host: %+v %v", rb, err)
	}
	if got := nsSomaxconn(t, ns); got != nsOld {
		t.Errorf("somaxconn in %s is %s after rollback, want %s", ns, got, nsOld)
	}
	if got := readLive(t, "/proc/sys/net/core/somaxconn"); got != host {
		t.Errorf("host somaxconn is %s after rollback, want its own %s", got, host)
	}
	if rb, err := Rollback(bg, RollbackOptions{StateDir: state}); err != nil || len(rb.Outcomes) != 0 {
		t.Errorf("second rollback: %+v %v", rb, err)
	}
}
