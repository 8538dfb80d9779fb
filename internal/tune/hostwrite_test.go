package tune

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"redline/internal/testutil"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"redline/internal/change"
	"redline/internal/netns"
)

// These tests write the real host. They run only with
// REDLINE_TEST_HOST_WRITES=1 (CI sets it), as root, and put back what they
// changed even when they fail: every test registers a t.Cleanup that
// writes the original value directly, without going through tune.

func requireHostWrites(t testing.TB) {
	t.Helper()
	testutil.HostWrites(t)
}

// guardFile saves a kernel file and restores it when the test ends, if it
// then differs: the safety net under tune's own rollback.
func guardFile(t *testing.T, path string) string {
	t.Helper()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if now, err := os.ReadFile(path); err == nil && string(now) != string(orig) {
			t.Errorf("%s was left at %q; putting back %q", path, now, orig)
			os.WriteFile(path, orig, 0)
		}
	})
	return strings.TrimSuffix(string(orig), "\n")
}

func liveSystem(t *testing.T) *System {
	s := LiveSystem()
	t.Cleanup(func() { s.Close() })
	return s
}

func TestHostSysctl(t *testing.T) {
	requireHostWrites(t)
	range0 := guardFile(t, "/proc/sys/net/ipv4/ip_local_port_range")
	somax0 := guardFile(t, "/proc/sys/net/core/somaxconn")
	f := strings.Fields(range0)
	// One more port at the top: harmless to anything else running.
	wantRange := fmt.Sprintf("%s %d", f[0], atoi(t, f[1])-1)
	wantSomax := fmt.Sprint(atoi(t, somax0) + 1)
	p := &Plan{Version: 1, Changes: []change.Change{
		{Kind: change.KindSysctl, Target: "net.ipv4.ip_local_port_range", Value: wantRange},
		{Kind: change.KindSysctl, Target: "net.core.somaxconn", Value: wantSomax},
	}}
	state := t.TempDir()
	res, err := Apply(bg, liveSystem(t), p, ApplyOptions{StateDir: state})
	if err != nil || res.Count(StatusApplied) != 2 {
		t.Fatalf("apply: %+v %v", res, err)
	}
	// The kernel reads the range back with a tab: tune compared it in
	// normal form, and so does this test.
	if got := readLive(t, "/proc/sys/net/ipv4/ip_local_port_range"); strings.Join(strings.Fields(got), " ") != wantRange || !strings.Contains(got, "\t") {
		t.Errorf("port range reads %q after apply, want %q with the kernel's tab", got, wantRange)
	}
	if got := readLive(t, "/proc/sys/net/core/somaxconn"); got != wantSomax {
		t.Errorf("somaxconn reads %q after apply, want %s", got, wantSomax)
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	if got := readLive(t, "/proc/sys/net/ipv4/ip_local_port_range"); got != range0 {
		t.Errorf("port range reads %q after rollback, want %q", got, range0)
	}
	if got := readLive(t, "/proc/sys/net/core/somaxconn"); got != somax0 {
		t.Errorf("somaxconn reads %q after rollback, want %q", got, somax0)
	}
}

// virtioQueueIRQs finds eth0's queue IRQs in /proc/interrupts: its device
// is virtioN, its queues virtioN-input.Q and virtioN-output.Q.
func virtioQueueIRQs(t *testing.T, ifname string) []string {
	t.Helper()
	dev, err := filepath.EvalSymlinks("/sys/class/net/" + ifname + "/device")
	if err != nil {
		t.Fatalf("%s has no device: %v", ifname, err)
	}
	name := filepath.Base(dev)
	if !strings.HasPrefix(name, "virtio") {
		t.Fatalf("%s is %s, not a virtio NIC: this test is for the CI VM's virtio_net eth0", ifname, name)
	}
	b, _ := os.ReadFile("/proc/interrupts")
	re := regexp.MustCompile(`(?m)^\s*(\d+):.*\s` + regexp.QuoteMeta(name) + `-(input|output)\.\d+$`)
	var irqs []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		irqs = append(irqs, m[1])
	}
	if len(irqs) == 0 {
		t.Fatalf("no %s-input/output IRQs in /proc/interrupts", name)
	}
	return irqs
}

func TestHostVirtioIRQAffinity(t *testing.T) {
	requireHostWrites(t)
	needCPUs(t, 2)
	irqs := virtioQueueIRQs(t, "eth0")
	p := &Plan{Version: 1}
	orig := map[string]string{}
	for _, irq := range irqs {
		path := "/proc/irq/" + irq + "/smp_affinity_list"
		orig[path] = guardFile(t, path)
		want := "1"
		if orig[path] == "1" {
			want = "0"
		}
		p.Changes = append(p.Changes, change.Change{Kind: change.KindFile, Target: path, Value: want})
	}
	managed := managedIRQ(t)
	if managed != "" {
		// A kernel-managed IRQ (virtio-blk's) refuses with EPERM: refused
		// as unchangeable, and the rest still applies.
		p.Changes = append(p.Changes, change.Change{Kind: change.KindFile, Target: "/proc/irq/" + managed + "/smp_affinity_list", Value: "0"})
	}
	state := t.TempDir()
	res, err := Apply(bg, liveSystem(t), p, ApplyOptions{StateDir: state})
	if err != nil || res.Count(StatusApplied) != len(irqs) {
		t.Fatalf("apply: %+v %v", res.Outcomes, err)
	}
	for _, o := range res.Outcomes {
		if o.Status == StatusRefused && !strings.Contains(o.Reason, "unchangeable") {
			t.Errorf("%s refused: %s", o.Change.Target, o.Reason)
		}
	}
	if managed != "" && res.Count(StatusRefused) != 1 {
		t.Errorf("the kernel-managed IRQ %s was not refused as unchangeable: %+v", managed, res.Outcomes)
	}
	t.Logf("queue IRQs %v moved; kernel-managed IRQ %q refused", irqs, managed)
	for _, c := range p.Changes[:len(irqs)] {
		if got := readLive(t, c.Target); got != c.Value {
			t.Errorf("%s reads %q after apply, want %q", c.Target, got, c.Value)
		}
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	for path, want := range orig {
		if got := readLive(t, path); got != want {
			t.Errorf("%s reads %q after rollback, want %q", path, got, want)
		}
	}
}

// managedIRQ returns a virtio block queue IRQ whose affinity the kernel
// manages (writes fail), if the machine has one.
func managedIRQ(t *testing.T) string {
	b, _ := os.ReadFile("/proc/interrupts")
	m := regexp.MustCompile(`(?m)^\s*(\d+):.*\svirtio\d+-req\.\d+$`).FindStringSubmatch(string(b))
	if m == nil {
		return ""
	}
	path := "/proc/irq/" + m[1] + "/smp_affinity_list"
	guardFile(t, path)
	if err := os.WriteFile(path, []byte("0\n"), 0); err == nil {
		return "" // not managed after all; the guard puts it back
	}
	return m[1]
}

// testNetns creates a network namespace with a 4-queue veth pair inside it,
// and deletes it (and the pair) when the test ends.
func testNetns(t testing.TB) (name, ifname string) { return testNetnsQueues(t, 4) }

// testNetnsQueues is testNetns with n queues each way.
func testNetnsQueues(t testing.TB, n int) (name, ifname string) {
	t.Helper()
	queues := fmt.Sprint(n)
	var b [3]byte
	rand.Read(b[:])
	suffix := hex.EncodeToString(b[:])
	name, ifname = "redline-tune-"+suffix, "rla"+suffix
	run(t, "ip", "netns", "add", name)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	run(t, "ip", "-n", name, "link", "add", ifname, "numtxqueues", queues, "numrxqueues", queues, "type", "veth",
		"peer", "name", "rlb"+suffix, "numtxqueues", queues, "numrxqueues", queues)
	run(t, "ip", "-n", name, "link", "set", ifname, "up")
	return name, ifname
}

// mountNetnsSysfs mounts a sysfs that shows the namespace's devices: sysfs
// takes the network namespace of the task that mounts it.
func mountNetnsSysfs(t testing.TB, ns string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "sys")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	err := netns.Do(ns, func() error {
		return unix.Mount("sysfs", dir, "sysfs", 0, "")
	})
	if err != nil {
		t.Fatalf("mount the sysfs of %s: %v", ns, err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return root
}

func TestHostRPSOnVethInNetns(t *testing.T) {
	requireHostWrites(t)
	needCPUs(t, 2)
	ns, ifname := testNetns(t)
	root := mountNetnsSysfs(t, ns)
	s := &System{Root: root, FS: OSFS{Root: root}, Live: true, euid: 0}
	q := "/sys/class/net/" + ifname + "/queues/"
	p := &Plan{Version: 1, Changes: []change.Change{
		{Kind: change.KindFile, Target: q + "rx-0/rps_cpus", Value: "3"},
		{Kind: change.KindFile, Target: q + "rx-1/rps_cpus", Value: "2"},
		{Kind: change.KindFile, Target: q + "rx-0/rps_flow_cnt", Value: "4096"},
		{Kind: change.KindFile, Target: q + "tx-0/xps_cpus", Value: "1"},
		{Kind: change.KindFile, Target: q + "tx-1/xps_cpus", Value: "2"},
	}}
	before := map[string]string{}
	for _, c := range p.Changes {
		before[c.Target] = readLive(t, filepath.Join(root, c.Target))
	}
	state := t.TempDir()
	res, err := Apply(bg, s, p, ApplyOptions{StateDir: state})
	if err != nil || res.Count(StatusApplied) != len(p.Changes) {
		t.Fatalf("apply: %+v %v", res.Outcomes, err)
	}
	for _, c := range p.Changes {
		if got := readLive(t, filepath.Join(root, c.Target)); !c.Same(got, c.Value) {
			t.Errorf("%s reads %q after apply, want %s", c.Target, got, c.Value)
		}
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	for path, want := range before {
		if got := readLive(t, filepath.Join(root, path)); got != want {
			t.Errorf("%s reads %q after rollback, want %q", path, got, want)
		}
	}
}

func TestHostVethChannelsInNetns(t *testing.T) {
	requireHostWrites(t)
	ns, ifname := testNetns(t)
	s := &System{Root: "/", FS: OSFS{Root: "/"}, Live: true, euid: 0, Channels: Ethtool{NetNS: ns}}
	before, _, err := s.Channels.Get(ifname)
	if err != nil {
		t.Fatal(err)
	}
	p := &Plan{Version: 1, Changes: []change.Change{{Kind: change.KindChannels, Target: ifname, Value: "rx=2 tx=2"}}}
	state := t.TempDir()
	if _, err := Apply(bg, s, p, ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	if cur, _, _ := s.Channels.Get(ifname); cur.RX != 2 || cur.TX != 2 {
		t.Fatalf("channels after apply: %+v", cur)
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state, System: s}); err != nil {
		t.Fatal(err)
	}
	if cur, _, _ := s.Channels.Get(ifname); cur != before {
		t.Fatalf("channels after rollback: %+v, want %+v", cur, before)
	}
	// Above the driver's maximum is a plan error, caught before writing.
	p.Changes[0].Value = "rx=64"
	if _, err := Apply(bg, s, p, ApplyOptions{StateDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "maximum") {
		t.Fatalf("rx above the maximum: %v", err)
	}
}

func readLive(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}
