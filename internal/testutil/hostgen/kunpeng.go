package hostgen

import "fmt"

// Kunpeng920 models the write-ups' server: a 2-socket Kunpeng 920
// (aarch64, 2 x 64 cores, no SMT, 4 NUMA nodes of 32 cores), openEuler
// 24.03 LTS SP1, a hinic NIC enp25s0 on node 1 whose 32 queue IRQs
// (enp25s0_qpN) are spread over all four nodes, an onboard hns3 port
// (down) on node 0, irqbalance running, and redis-server 6.2.7 started
// with `numactl -N 0` (so on node 0, away from the NIC) serving 32
// redis-benchmark connections. See testdata/hosts/kunpeng920-4node-hinic/SOURCE.
func Kunpeng920() *Machine {
	const ncpu = 128
	m := &Machine{
		Release:  "6.6.0-72.0.0.76.oe2403sp1.aarch64",
		Version:  "Linux version 6.6.0-72.0.0.76.oe2403sp1.aarch64 (root@dc-64g.compass-ci) (gcc_old (GCC) 12.3.1 (openEuler 12.3.1-62.oe2403sp1), GNU ld (GNU Binutils) 2.41) #1 SMP Wed Dec 18 21:36:03 CST 2024",
		Cmdline:  "BOOT_IMAGE=/vmlinuz-6.6.0-72.0.0.76.oe2403sp1.aarch64 root=/dev/mapper/openeuler-root ro rd.lvm.lv=openeuler/root rd.lvm.lv=openeuler/swap video=VGA-1:640x480-32@60me cgroup_disable=files apparmor=0 crashkernel=1024M,high smmu.bypassdev=0x1000:0x17 smmu.bypassdev=0x1000:0x15 arm64.nopauth console=tty0",
		Hostname: "master",
		CPUInfo:  kunpengCPUInfo,
		NCPU:     ncpu,
		Topo: func(c int) Topo {
			return Topo{Package: c / 64, Core: c % 64, Cluster: (c % 64) / 4, Die: -1, Siblings: []int{c}, Online: true}
		},
		Nodes:      [][]int{Range(0, 31), Range(32, 63), Range(64, 95), Range(96, 127)},
		NodeMemKB:  []uint64{132070720, 132120576, 132120576, 132116480},
		Distances:  [][]int{{10, 12, 20, 22}, {12, 10, 22, 24}, {20, 22, 10, 12}, {22, 24, 12, 10}},
		Freq:       &Freq{Driver: "cppc_cpufreq", Governor: "performance", Governors: "conservative ondemand userspace powersave performance schedutil", CurKHz: 2600000, MinKHz: 200000, MaxKHz: 2600000, HWMinKHz: 200000, HWMaxKHz: 2600000},
		IdleDriver: "psci_idle", IdleGov: "menu",
		Idle:         []Idle{{Name: "WFI", Latency: 1, Residency: 1}},
		Clocksource:  "arch_sys_counter",
		Clocksources: "arch_sys_counter",
		DMIVendor:    "Huawei", DMIProduct: "TaiShan 200 (Model 2280)",
		THPEnabled:    "[always] madvise never",
		THPDefrag:     "always defer defer+madvise [madvise] never",
		Sysctls:       baseSysctls(),
		Meminfo:       meminfoText(528428352, 4194300, 2097152),
		VMStat:        vmstatText(812345, 402311, 0, 0),
		IRQStyle:      StyleGIC,
		SoftnetFields: 15,
		SelfPID:       5000,
		NetNS:         4026531840,
		Netstat:       netstatText(1523, 0),
		Sockstat:      sockstatText(36, 0, 5),
	}
	m.Sysctls["net.core.rmem_max"] = "212992"
	m.IRQs, m.NICs = kunpengDevices(ncpu)
	m.Counters = armCounters
	m.Procs, m.TCP = kunpengProcs(m.NetNS)
	m.Files, m.Links = kunpengFiles()
	return m
}

// kunpengCPUInfo is a processor block as Kunpeng 920 prints it (arm64
// has no "model name"; the implementer/part pair 0x48/0xd01 names it).
func kunpengCPUInfo(c int) string {
	return fmt.Sprintf("processor\t: %d\nBogoMIPS\t: 200.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma dcpop asimddp asimdfhm\nCPU implementer\t: 0x48\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd01\nCPU revision\t: 0\n", c)
}

func kunpengDevices(ncpu int) ([]IRQ, []NIC) {
	all := Range(0, ncpu-1)
	irqs := []IRQ{
		{N: 11, Chip: "GICv3", HW: 27, Trigger: "Level", Name: "arch_timer", Affinity: all, Effective: all, Node: -1, Hits: 1834567},
		{N: 14, Chip: "GICv3", HW: 23, Trigger: "Level", Name: "arm-pmu", Affinity: all, Effective: all, Node: -1, Hits: 0},
		{N: 16, Chip: "GICv3", HW: 33, Trigger: "Level", Name: "uart-pl011", Affinity: all, Effective: []int{0}, Node: -1, Hits: 1542},
	}
	const hinicBus, hns3Bus = "0000:19:00.0", "0000:7d:00.0"
	var hinicMSI, hns3MSI []int
	// hinic event queues: in msi_irqs, but not named after a queue.
	for i := 0; i < 4; i++ {
		n := 70 + i
		hinicMSI = append(hinicMSI, n)
		irqs = append(irqs, IRQ{N: n, Chip: "ITS-MSI", HW: 13107200 + i, Trigger: "Edge", Name: fmt.Sprintf("hinic_aeq%d@pci:%s", i, hinicBus),
			Affinity: Range(32, 63), Effective: []int{32 + i}, Node: 1, Hits: 12})
	}
	// The write-up: queue IRQs enp25s0_qpN spread over all nodes.
	for q := 0; q < 32; q++ {
		n := 74 + q
		cpu := (q * 4) % ncpu
		hinicMSI = append(hinicMSI, n)
		irqs = append(irqs, IRQ{N: n, Chip: "ITS-MSI", HW: 13107204 + q, Trigger: "Edge", Name: fmt.Sprintf("enp25s0_qp%d", q),
			Affinity: []int{cpu}, Effective: []int{cpu}, Node: 1, Hits: uint64(3400000 + q*1117)})
	}
	// hns3 (onboard, link down): vector names count 0, 2, 4 ... and a misc vector.
	hns3MSI = append(hns3MSI, 120)
	irqs = append(irqs, IRQ{N: 120, Chip: "ITS-MSI", HW: 16777216, Trigger: "Edge", Name: "hclge-misc-" + hns3Bus,
		Affinity: Range(0, 31), Effective: []int{0}, Node: 0, Hits: 3})
	for v := 0; v < 8; v++ {
		n := 121 + v
		hns3MSI = append(hns3MSI, n)
		irqs = append(irqs, IRQ{N: n, Chip: "ITS-MSI", HW: 16777217 + v, Trigger: "Edge", Name: fmt.Sprintf("hns3-%s-TxRx-%d", hns3Bus, 2*v),
			Affinity: []int{v}, Effective: []int{v}, Node: 0, Hits: 0})
	}
	hinic := NIC{Name: "enp25s0", Driver: "hinic", DriverBus: "pci",
		Device: "/sys/devices/pci0000:14/0000:14:00.0/" + hinicBus, NUMANode: 1, LocalCPUs: "32-63", MSI: hinicMSI,
		MTU: 1500, Speed: 25000, Oper: "up", Addr: "28:41:c6:5a:0e:31", Duplex: "full", TxQLen: 1000, RxQ: 32, TxQ: 32,
		RPS: func(int) string { return Mask(nil, ncpu) }, XPS: func(int) string { return Mask(nil, ncpu) },
		Addrs:   []string{"192.168.100.2/24", "fe80::2a41:c6ff:fe5a:e31/64"},
		Ethtool: `{"driver":"hinic","version":"2.3.2.17","firmware":"2.4.1.0","bus_info":"0000:19:00.0","channels":{"max_rx":0,"max_tx":0,"max_other":0,"max_combined":64,"rx":0,"tx":0,"other":0,"combined":32},"ring":{"rx_max":16384,"tx_max":16384,"rx":4096,"tx":4096},"coalesce":{"adaptive_rx":false,"adaptive_tx":false,"rx_usecs":16,"rx_frames":32,"tx_usecs":0,"tx_frames":0}}`,
	}
	hinic.PCIDev = hinic.Device
	hns3 := NIC{Name: "enp125s0f0", Driver: "hns3", DriverBus: "pci",
		Device: "/sys/devices/pci0000:7c/0000:7c:00.0/" + hns3Bus, NUMANode: 0, LocalCPUs: "0-31", MSI: hns3MSI,
		MTU: 1500, Speed: -1, Oper: "down", Addr: "c0:a8:02:81:00:01", Duplex: "unknown", TxQLen: 1000, RxQ: 8, TxQ: 8,
		RPS: func(int) string { return Mask(nil, ncpu) }, XPS: func(int) string { return Mask(nil, ncpu) },
	}
	hns3.PCIDev = hns3.Device
	lo := NIC{Name: "lo", VirtualDir: "/sys/devices/virtual/net/lo", MTU: 65536, Speed: -1, Oper: "unknown",
		Addr: "00:00:00:00:00:00", Duplex: "unknown", RxQ: 1, TxQ: 1, Addrs: []string{"127.0.0.1/8", "::1/128"},
		RPS: func(int) string { return Mask(nil, ncpu) }, XPS: func(int) string { return "" }}
	hns3.Addrs = []string{}
	return irqs, []NIC{hinic, hns3, lo}
}

// armCounters are arm64's IPI rows and Err.
func armCounters(ncpu int) []Counter {
	descs := []string{"Rescheduling interrupts", "Function call interrupts", "CPU stop interrupts",
		"CPU stop (for crash dump) interrupts", "Timer broadcast interrupts", "IRQ work interrupts", "CPU wake-up interrupts"}
	var out []Counter
	for i, d := range descs {
		mult := uint64([]int{5311, 1201, 0, 0, 0, 17, 0}[i])
		out = append(out, Counter{Name: fmt.Sprintf("IPI%d", i), Desc: d, PerCPU: func(c int) uint64 { return mult * uint64(c%13+1) }})
	}
	return append(out, Counter{Name: "Err"})
}

func kunpengProcs(netns uint64) ([]Proc, map[string][]Sock) {
	const pid = 4242
	socks, fds := clientSockets("192.168.100.2", "192.168.100.1", 6379, 32, 5, 73001)
	redis := Proc{PID: pid, Comm: "redis-server", Cmdline: []string{"./src/redis-server *:6379"}, Detailed: true,
		Threads:     redisThreads(pid, []int{5, 12, 13, 14, 7}, 0),
		CpusAllowed: "0-31", Mems: "0-3", VmRSSkB: 1253400, AnonHugekB: 0,
		NUMAMaps: "aaaad1a40000 default file=/root/redis-6.2.7/src/redis-server mapped=1460 active=0 N0=1460 kernelpagesize_kB=4\n" +
			"aaaad1f60000 default heap anon=1900 dirty=1900 N0=1900 kernelpagesize_kB=4\n" +
			"ffff8c000000 default anon=309504 dirty=309504 active=0 N0=304128 N1=5376 kernelpagesize_kB=4\n" +
			"ffff9e3c0000 default file=/usr/lib64/libc.so.6 mapped=380 mapmax=41 N0=212 N2=168 kernelpagesize_kB=4\n",
		NoFile: [2]string{"10032", "10032"}, NetNS: netns, Fds: fds,
		Cgroup: "12:blkio:/user.slice\n11:cpuset:/\n10:memory:/user.slice/user-0.slice/session-1.scope\n9:pids:/user.slice/user-0.slice/session-1.scope\n4:cpu,cpuacct:/user.slice\n1:name=systemd:/user.slice/user-0.slice/session-1.scope\n0::/user.slice/user-0.slice/session-1.scope\n",
	}
	procs := []Proc{
		{PID: 1, Comm: "systemd"},
		{PID: 1187, Comm: "irqbalance"},
		{PID: 1502, Comm: "sshd"},
		redis,
		{PID: 4300, Comm: "bash"},
	}
	return procs, map[string][]Sock{"/proc/net": socks}
}

func kunpengFiles() (map[string]string, map[string]string) {
	const cg = "/sys/fs/cgroup"
	files := map[string]string{
		"/proc/5000/mountinfo": "1 0 253:0 / / rw,relatime shared:1 - xfs /dev/mapper/openeuler-root rw\n" +
			"22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc rw\n" +
			"23 1 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw\n" +
			"26 23 0:25 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:3 - tmpfs tmpfs ro,mode=755\n" +
			"27 26 0:26 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n" +
			"28 26 0:27 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:5 - cgroup cgroup rw,xattr,name=systemd\n" +
			"32 26 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n" +
			"35 26 0:34 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:12 - cgroup cgroup rw,memory\n" +
			"39 26 0:38 / /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime shared:16 - cgroup cgroup rw,cpuset\n",
		"/proc/1/cgroup":                                                             "11:cpuset:/\n4:cpu,cpuacct:/\n1:name=systemd:/init.scope\n0::/init.scope\n",
		cg + "/cpuset/cpuset.effective_cpus":                                         "0-127\n",
		cg + "/cpuset/cpuset.effective_mems":                                         "0-3\n",
		cg + "/cpu,cpuacct/user.slice/cpu.cfs_quota_us":                              "-1\n",
		cg + "/cpu,cpuacct/user.slice/cpu.cfs_period_us":                             "100000\n",
		cg + "/cpu,cpuacct/user.slice/cpu.stat":                                      "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n",
		cg + "/memory/user.slice/user-0.slice/session-1.scope/memory.limit_in_bytes": "9223372036854771712\n",
		"/etc/sysconfig/irqbalance":                                                  "# irqbalance is a daemon process that distributes interrupts across\n# CPUS on SMP systems. The default is to rebalance once every 10\n# seconds. This is the environment file that is specified to systemd via the\n# EnvironmentFile key in the service unit file (or via whatever method the init\n# system you're using has.\n#\n#IRQBALANCE_ONESHOT=\n#IRQBALANCE_BANNED_CPULIST=\n#IRQBALANCE_BANNED_CPUS=\nIRQBALANCE_ARGS=\"\"\n",
	}
	links := map[string]string{
		"/etc/systemd/system/multi-user.target.wants/irqbalance.service": "/usr/lib/systemd/system/irqbalance.service",
	}
	return files, links
}
