package host

import (
	"errors"
	"os"
	"path/filepath"
	"redline/internal/testutil"
	"slices"
	"strings"
	"testing"
)

// What each fixture tree must show: the facts the doctor and the tuner
// depend on, asserted directly (the golden files catch everything else).

func TestKunpengFacts(t *testing.T) {
	s, _ := readFixture(t, "kunpeng920-4node-hinic", Options{})
	if s.Kernel.Arch != "aarch64" || s.CPU.ModelName != "HiSilicon Kunpeng 920 (TaiShan v110)" {
		t.Errorf("arch %q model %q (from cpuinfo: no kernel/arch on this kernel)", s.Kernel.Arch, s.CPU.ModelName)
	}
	if len(s.NUMA.Nodes) != 4 || s.CPU.Threads != 128 || s.CPU.Cores != 128 || s.CPU.Packages != 2 {
		t.Fatalf("topology: %d nodes, %d threads, %d cores, %d packages", len(s.NUMA.Nodes), s.CPU.Threads, s.CPU.Cores, s.CPU.Packages)
	}
	if s.NUMA.Nodes[1].CPUs.String() != "32-63" || !slices.Equal(s.NUMA.Nodes[3].Distances, []int{22, 24, 12, 10}) {
		t.Errorf("node 1 %s, node 3 distances %v", s.NUMA.Nodes[1].CPUs, s.NUMA.Nodes[3].Distances)
	}
	nic := s.NIC("enp25s0")
	if nic == nil || nic.NUMANode == nil || *nic.NUMANode != 1 || nic.LocalCPUs.String() != "32-63" || nic.Driver != "hinic" {
		t.Fatalf("enp25s0: %+v", nic)
	}
	if len(nic.QueueIRQs) != 32 || len(nic.UnmappedQueues) != 0 || len(nic.UnmappedIRQs) != 0 || len(nic.OtherIRQs) != 4 {
		t.Errorf("enp25s0: %d queue IRQs, unmapped queues %v, %d unmapped IRQs, %d others", len(nic.QueueIRQs), nic.UnmappedQueues, len(nic.UnmappedIRQs), len(nic.OtherIRQs))
	}
	// The write-up's situation: queue IRQs spread over all four nodes.
	nodes := map[int]int{}
	for _, m := range nic.QueueIRQs {
		for _, n := range s.NodesOf(*s.Interrupts.IRQ(m.IRQ).Effective) {
			nodes[n]++
		}
	}
	if len(nodes) != 4 || nodes[1] != 8 {
		t.Errorf("queue IRQs per node %v, want 8 on each of 4", nodes)
	}
	if got := s.NIC("enp125s0f0"); got == nil || len(got.QueueIRQs) != 8 || got.QueueIRQs[7].Queue != 7 || got.RxQueues[7].IRQs[0] != 128 {
		t.Errorf("hns3 mapping: %+v", got)
	}
	p := s.Process(4242)
	if p == nil || p.MainThread() == nil || *p.MainThread().Node != 0 || p.CPUsAllowed.String() != "0-31" {
		t.Fatalf("redis: %+v", p)
	}
	if p.NUMAPages[0] < 300000 || len(p.Listen) != 2 || p.Listen[0].Port != 6379 || !p.NetNSIsInspector {
		t.Errorf("redis pages %v listen %v", p.NUMAPages, p.Listen)
	}
	if len(p.Traffic) != 1 || p.Traffic[0].NIC != "enp25s0" || p.Traffic[0].Connections != 32 || p.ListenNICs != nil {
		t.Errorf("traffic %+v listen NICs %v (0.0.0.0 names none)", p.Traffic, p.ListenNICs)
	}
	if cg := p.Cgroup; cg == nil || cg.Version != 1 || cg.CPUQuotaUs != nil || cg.MemoryMax != nil || cg.CPUs.String() != "0-127" {
		t.Errorf("cgroup v1 (no quota, unlimited memory): %+v", cg)
	}
	if !s.Irqbalance.Running || s.Irqbalance.ConfigPath != "/etc/sysconfig/irqbalance" || !s.Irqbalance.EnabledAtBoot {
		t.Errorf("irqbalance %+v", s.Irqbalance)
	}
	if s.THP.Enabled != "always" || s.Sysctls["kernel.numa_balancing"] != "1" || s.Net.TcpExt["ListenOverflows"] != 1523 {
		t.Errorf("THP %q numa_balancing %q ListenOverflows %d", s.THP.Enabled, s.Sysctls["kernel.numa_balancing"], s.Net.TcpExt["ListenOverflows"])
	}
	if e := nic.Ethtool; e == nil || e.Channels.Combined != 32 || e.Channels.MaxCombined != 64 {
		t.Errorf("ethtool from the fixture: %+v", e)
	}
	if len(s.Softnet) != 128 || s.Softnet[127].CPU != 127 || s.Softirqs.Counts["NET_RX"] == nil || len(s.Softirqs.CPUs) != 128 {
		t.Errorf("softnet %d rows, softirqs %v", len(s.Softnet), s.Softirqs.CPUs)
	}
}

// With the write-up's oeAware line the same IRQs map through the user rule.
func TestKunpengUserPattern(t *testing.T) {
	s, _ := readFixture(t, "kunpeng920-4node-hinic", Options{IRQPatterns: []string{"REGEXP:VAR_ETH_qpVAR_QUEUE"}})
	nic := s.NIC("enp25s0")
	if len(nic.QueueIRQs) != 32 || nic.QueueIRQs[31].Rule != "user:REGEXP:VAR_ETH_qpVAR_QUEUE" || nic.QueueIRQs[31].Queue != 31 {
		t.Errorf("user rule mapping: %+v", nic.QueueIRQs[31])
	}
	if s2, _ := readFixture(t, "kunpeng920-4node-hinic", Options{IRQPatterns: []string{"nonsense"}}); len(s2.Errors) != 1 || !strings.Contains(s2.Errors[0].Error, "REGEXP:") {
		t.Errorf("a bad pattern should be one error saying the syntax: %+v", s2.Errors)
	}
}

func TestX86Mlx5Facts(t *testing.T) {
	s, _ := readFixture(t, "x86-2socket-mlx5", Options{})
	mlx := s.NIC("ens2f0np0")
	if mlx == nil || *mlx.NUMANode != 1 || mlx.PCIAddress != "0000:af:00.0" || mlx.Driver != "mlx5_core" {
		t.Fatalf("mlx5 NIC %+v", mlx)
	}
	noQueue, offNode := 0, 0
	for _, m := range mlx.QueueIRQs {
		if m.NoQueue {
			noQueue++
		}
		if !slices.Equal(s.NodesOf(*s.Interrupts.IRQ(m.IRQ).Effective), []int{1}) {
			offNode++
		}
	}
	if len(mlx.QueueIRQs) != 40 || noQueue != 8 || offNode != 4 || len(mlx.OtherIRQs) != 1 {
		t.Errorf("mlx5: %d queue IRQs, %d without queue, %d off node, others %v", len(mlx.QueueIRQs), noQueue, offNode, mlx.OtherIRQs)
	}
	if x := mlx.TxQueues[0].XPSCPUs; x == nil || x.String() != "20" {
		t.Errorf("tx-0 xps %v", x)
	}
	// Intel numbering: CPU 3's sibling is 43; spread uses every core first.
	if c := s.CPUByID(3); c.Siblings.String() != "3,43" || *c.Core != 3 || *c.Node != 0 {
		t.Errorf("cpu 3: %+v", c)
	}
	order := s.SpreadOrder(s.NodeCPUs(1))
	if len(order) != 40 || order[19] != 39 || order[20] != 60 {
		t.Errorf("SpreadOrder(node 1) = %v: want the 20 cores' first threads, then their siblings", order)
	}
	host, ctr := s.Process(31337), s.Process(40001)
	if host == nil || ctr == nil {
		t.Fatal("both redis-server processes should be found")
	}
	if io := slices.IndexFunc(host.Threads, func(t Thread) bool { return t.Role == "io" }); io < 0 || host.Cgroup.NrThrottled == nil || *host.Cgroup.NrThrottled != 2210 || *host.Cgroup.CPUQuotaUs != 200000 {
		t.Errorf("host redis: io thread %d, cgroup %+v", io, host.Cgroup)
	}
	if ctr.NetNSIsInspector || ctr.NetSysctls["net.core.somaxconn"] != "511" || ctr.Net == nil || ctr.Net.TcpExt["ListenOverflows"] != 312 {
		t.Errorf("container redis: netns %v sysctls %v", ctr.NetNSIsInspector, ctr.NetSysctls)
	}
	if _, ok := ctr.NetSysctls["net.core.netdev_max_backlog"]; ok {
		t.Error("netdev_max_backlog exists only in the initial namespace; the fixture has none for the container")
	}
	if ctr.Net.TCP.Ports[0].FromEstablished != 12 || ctr.Cgroup.CPUs.String() != "20-23" {
		t.Errorf("container sockets %+v cgroup %+v", ctr.Net.TCP, ctr.Cgroup)
	}
	// The address is on a VLAN over the mlx5 port: the traffic NIC leads
	// down to the NIC with the queues.
	if len(host.Traffic) != 1 || host.Traffic[0].NIC != "ens2f0np0.100" || host.Traffic[0].Connections != 64 {
		t.Errorf("host redis traffic %+v", host.Traffic)
	}
	if low := s.LowerNICs(s.NIC("ens2f0np0.100")); len(low) != 1 || low[0].Name != "ens2f0np0" {
		t.Errorf("LowerNICs = %v", low)
	}
	if ctr.Traffic != nil {
		t.Errorf("a process in another namespace gets no traffic NICs (ours hold other addresses): %+v", ctr.Traffic)
	}
	if b := s.Irqbalance.BannedCPUs; b == nil || b.String() != "0,40" {
		t.Errorf("banned CPUs %v", b)
	}
	if s.CPU.Freq[0].Governor != "powersave" || s.CPUByID(79).Governor != "powersave" || len(s.CPUByID(0).Idle) != 4 {
		t.Errorf("governor/idle: %+v", s.CPU.Freq[0])
	}
}

func TestVirtioFacts(t *testing.T) {
	s, _ := readFixture(t, "kvm-virtio-multiqueue", Options{})
	eth := s.NIC("eth0")
	if eth == nil || eth.NUMANode == nil || *eth.NUMANode != -1 || eth.NUMANodeFrom != "/sys/devices/pci0000:00/0000:00:03.0/numa_node" {
		t.Fatalf("eth0 numa node: %+v", eth)
	}
	if eth.Device != "/sys/devices/pci0000:00/0000:00:03.0/virtio1" || eth.PCIAddress != "0000:00:03.0" || len(eth.MSIIRQs) != 17 {
		t.Errorf("device %q pci %q msi %v", eth.Device, eth.PCIAddress, eth.MSIIRQs)
	}
	if len(eth.QueueIRQs) != 16 || len(eth.UnmappedQueues) != 0 || eth.RxQueues[7].IRQs[0] != 45 || eth.TxQueues[7].IRQs[0] != 46 {
		t.Errorf("virtio mapping: %d, unmapped %v, rx-7 %v tx-7 %v", len(eth.QueueIRQs), eth.UnmappedQueues, eth.RxQueues[7].IRQs, eth.TxQueues[7].IRQs)
	}
	if x := eth.TxQueues[3].XPSCPUs; x == nil || x.String() != "6-7" {
		t.Errorf("tx-3 xps %v", x)
	}
	p := s.Process(812)
	main := p.MainThread()
	input1 := s.Interrupts.IRQ(eth.RxQueues[1].IRQs[0])
	if *main.CPU != 2 || !input1.Effective.Contains(2) {
		t.Errorf("redis main thread on %d, input.1 effective %v", *main.CPU, input1.Effective)
	}
	if *p.AnonHugePages == 0 || s.THP.Enabled != "always" || len(s.CPU.Freq) != 0 || s.Virtualization == nil || !s.Virtualization.Hypervisor {
		t.Errorf("THP %v freq %v virt %+v", p.AnonHugePages, s.CPU.Freq, s.Virtualization)
	}
	if p.Listen[0].Addr != "127.0.0.1" || p.Listen[1].Addr != "::1" || !slices.Equal(p.ListenNICs, []string{"lo"}) {
		t.Errorf("listen %+v on %v", p.Listen, p.ListenNICs)
	}
	if !slices.Equal(eth.Addresses, []string{"10.10.1.5/24", "fe80::5054:ff:fe8c:2e11/64"}) {
		t.Errorf("eth0 addresses %v", eth.Addresses)
	}
	// CPUs taking the input IRQs (effective 0, 2, 4 ...) show softirq time.
	if ts := s.CPU.Times; len(ts) != 16 || ts[2].SoftIRQ < 10*ts[3].SoftIRQ {
		t.Errorf("per-CPU times %+v", ts)
	}
	if order := s.SpreadOrder(CPURange(0, 5)); !slices.Equal(order, []int{0, 2, 4, 1, 3, 5}) {
		t.Errorf("SpreadOrder with adjacent siblings = %v", order)
	}
}

func TestLocalCaptureFacts(t *testing.T) {
	s, _ := readFixture(t, "local-virtio-2cpu", Options{})
	eth := s.NIC("eth0")
	if eth == nil || *eth.NUMANode != -1 || !eth.TxQueues[0].XPSUnsupported || eth.TxQueues[0].XPSCPUs != nil {
		t.Fatalf("eth0: %+v", eth)
	}
	if eth.RxQueues[0].RPSUnsupported || eth.RxQueues[0].RPSCPUs == nil {
		t.Error("rps_cpus is readable on this NIC")
	}
	if len(s.Processes) != 1 || s.Processes[0].Listen[0].Port != 6399 || len(s.Processes[0].Threads) < 5 {
		t.Errorf("captured redis: %+v", s.Processes)
	}
	if lo := s.NIC("lo"); lo == nil || !lo.Virtual || lo.SpeedMbps != nil {
		t.Errorf("lo: %+v (speed is EINVAL there: absent)", lo)
	}
}

// A tree with nothing in it gives an empty snapshot, not errors.
func TestMissingFilesAreAbsent(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"proc", "sys"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Read(fs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Errors) > 0 {
		t.Errorf("an empty tree gave errors: %+v", s.Errors)
	}
	if s.THP != nil || s.Clocksource != nil || s.Memory.MemTotal != nil || len(s.NICs) != 0 || len(s.Sysctls) != 0 || s.Softirqs != nil {
		t.Errorf("absent facts should stay absent: %+v", s)
	}
}

// A malformed file is an error naming the file and line; the rest of the
// snapshot is still read.
func TestMalformedFilesKeepTheRest(t *testing.T) {
	root := testutil.CopyTree(t, filepath.Join(hostsDir, "kvm-virtio-multiqueue"))
	corrupt := map[string]func(string) string{
		"proc/interrupts":                       func(s string) string { return strings.Replace(s, "virtio1-input.3", "virtio1-input.3\n 77: twelve", 1) },
		"proc/meminfo":                          func(s string) string { return strings.Replace(s, "SwapTotal:", "SwapTotal: lots", 1) },
		"sys/devices/system/node/node0/cpulist": func(string) string { return "0-x\n" },
		"proc/812/limits": func(s string) string {
			return strings.Replace(s, "65535                65535", "many                 65535", 1)
		},
	}
	for p, f := range corrupt {
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(f(string(data))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Read(fs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"/proc/interrupts": 0, "/proc/meminfo": 0, "/sys/devices/system/node/node0/cpulist": 1, "/proc/812/limits": 0}
	for _, e := range s.Errors {
		if _, ok := want[e.Path]; ok && e.Line > 0 {
			delete(want, e.Path)
		}
	}
	if len(want) > 0 {
		t.Errorf("no error with a line number for %v; errors: %+v", want, s.Errors)
	}
	// The rest is there: the good IRQ lines, the NIC mapping, the process.
	if len(s.Interrupts.IRQs) < 30 || len(s.NIC("eth0").QueueIRQs) != 16 || s.Process(812) == nil || s.Memory.MemTotal == nil {
		t.Errorf("the rest of the snapshot is missing: %d IRQs", len(s.Interrupts.IRQs))
	}
	for _, e := range s.Errors {
		if e.Source == "" || e.Error == "" {
			t.Errorf("error without source or text: %+v", e)
		}
	}
}

func TestFSMapping(t *testing.T) {
	root, proc, sys := t.TempDir(), t.TempDir(), t.TempDir()
	fs, err := NewFSWith(FSOptions{Root: root, Proc: proc, Sys: sys})
	if err != nil {
		t.Fatal(err)
	}
	if fs.Live() {
		t.Error("a fixture FS is not live")
	}
	for host, want := range map[string]string{
		"/proc/interrupts":        filepath.Join(proc, "interrupts"),
		"/proc":                   proc,
		"/sys/class/net/eth0/mtu": filepath.Join(sys, "class/net/eth0/mtu"),
		"/etc/default/irqbalance": filepath.Join(root, "etc/default/irqbalance"),
		"/procfoo/x":              filepath.Join(root, "procfoo/x"),
		"/proc/../etc/passwd":     filepath.Join(root, "etc/passwd"),
		"/ethtool/eth0.json":      filepath.Join(root, "ethtool/eth0.json"),
	} {
		if got := fs.Path(host); got != want {
			t.Errorf("Path(%q) = %q, want %q", host, got, want)
		}
	}
	if _, err := NewFS(filepath.Join(root, "missing")); err == nil {
		t.Error("NewFS on a missing directory: no error")
	}
	live, err := NewFS("/")
	if err != nil || !live.Live() {
		t.Errorf("NewFS(/) live=%v err=%v", live.Live(), err)
	}
}

func TestFSUnreadableMarkerAndLinks(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"proc", "sys/devices/a/b", "sys/class"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must(t, os.Symlink("unreadable:EINVAL", filepath.Join(root, "sys/devices/a/b/speed")))
	must(t, os.Symlink("../devices/a/b", filepath.Join(root, "sys/class/x")))
	must(t, os.Symlink("/etc/passwd", filepath.Join(root, "sys/class/out")))
	fs, err := NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.ReadFile("/sys/class/x/speed"); !isUnsupported(err) || !strings.Contains(err.Error(), "invalid argument") {
		t.Errorf("marker read: %v, want EINVAL", err)
	}
	if _, err := fs.ReadFile("/sys/class/x/nothing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: %v", err)
	}
	if p, err := fs.EvalSymlinks("/sys/class/x"); err != nil || p != "/sys/devices/a/b" {
		t.Errorf("EvalSymlinks = %q, %v", p, err)
	}
	if _, err := fs.EvalSymlinks("/sys/class/out"); err == nil {
		t.Error("a link leading out of the tree should be an error")
	}
	if ents, err := fs.ReadDir("/sys/class"); err != nil || len(ents) != 2 || !ents[1].Dir {
		t.Errorf("ReadDir = %+v, %v", ents, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
