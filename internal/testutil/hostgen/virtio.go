package hostgen

import "fmt"

// VirtioVM models a 16-vCPU KVM guest (8 cores x 2 threads, siblings
// numbered next to each other, one NUMA node) on Debian 12 (6.1) with a
// multi-queue virtio_net NIC: 8 queue pairs, virtio1-input.N/output.N on
// per-device MSI-X vectors, each pair's IRQs and XPS set by the driver to
// two CPUs (virtnet_set_affinity's stride); the NIC's numa_node is -1 one
// level up from the virtio device. THP is [always] and redis-server's main
// thread shares CPU 2 with queue 1's IRQ. No cpufreq, haltpoll cpuidle.
// See testdata/hosts/kvm-virtio-multiqueue/SOURCE.
func VirtioVM() *Machine {
	const ncpu = 16
	smt := true
	m := &Machine{
		Release:    "6.1.0-18-amd64",
		Version:    "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)",
		Cmdline:    "BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=0b1e3a52-77f0-4c84-8f5e-2f8f7bb1a6c2 ro console=ttyS0,115200 quiet",
		Hostname:   "cache-vm-3",
		ArchSysctl: "x86_64",
		CPUInfo: func(c int) string {
			return fmt.Sprintf("processor\t: %d\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 106\nmodel name\t: Intel Xeon Processor (Icelake)\nstepping\t: 0\nphysical id\t: 0\nsiblings\t: 16\ncore id\t\t: %d\ncpu cores\t: 8\nflags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl xtopology cpuid tsc_known_freq pni pclmulqdq ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand hypervisor lahf_lm abm 3dnowprefetch avx2 avx512f arat\n", c, c/2)
		},
		NCPU: ncpu,
		Topo: func(c int) Topo {
			return Topo{Package: 0, Core: c / 2, Cluster: c / 2, Die: 0, Siblings: []int{c &^ 1, c | 1}, Online: true}
		},
		Nodes:      [][]int{Range(0, 15)},
		NodeMemKB:  []uint64{65842412},
		Distances:  [][]int{{10}},
		SMT:        &smt,
		IdleDriver: "haltpoll", IdleGov: "haltpoll",
		Idle:         []Idle{{Name: "POLL"}, {Name: "haltpoll idle", Latency: 1, Residency: 1}},
		Clocksource:  "kvm-clock",
		Clocksources: "kvm-clock tsc acpi_pm",
		DMIVendor:    "QEMU", DMIProduct: "Standard PC (Q35 + ICH9, 2009)",
		THPEnabled:    "[always] madvise never",
		THPDefrag:     "always defer defer+madvise [madvise] never",
		Sysctls:       baseSysctls(),
		Meminfo:       meminfoText(65842412, 0, 3129344),
		VMStat:        vmstatText(0, 0, 0, 0),
		IRQStyle:      StyleX86,
		SoftnetFields: 15,
		SelfPID:       9001,
		NetNS:         4026531840,
		Netstat:       netstatText(0, 0),
		Sockstat:      sockstatText(70, 0, 3),
	}
	m.Sysctls["kernel.numa_balancing"] = "0"
	m.IRQs, m.NICs = virtioDevices(ncpu)
	m.Counters = x86Counters
	m.Procs, m.TCP = virtioProcs(m.NetNS)
	m.Files = map[string]string{
		"/proc/9001/mountinfo": "21 26 0:20 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n" +
			"22 26 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n" +
			"26 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro\n" +
			"28 21 0:25 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
		"/proc/1/cgroup": "0::/init.scope\n",
		"/sys/fs/cgroup/system.slice/redis-server.service/cpuset.cpus.effective": "0-15\n",
		"/sys/fs/cgroup/system.slice/redis-server.service/cpuset.mems.effective": "0\n",
		"/sys/fs/cgroup/system.slice/redis-server.service/cpu.max":               "max 100000\n",
		"/sys/fs/cgroup/system.slice/redis-server.service/cpu.stat":              "usage_usec 81234567\nuser_usec 31234567\nsystem_usec 50000000\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n",
		"/sys/fs/cgroup/system.slice/redis-server.service/memory.max":            "max\n",
	}
	return m
}

func virtioDevices(ncpu int) ([]IRQ, []NIC) {
	all := Range(0, ncpu-1)
	irqs := []IRQ{
		{N: 0, Chip: "IO-APIC", HW: 2, Trigger: "edge", Name: "timer", Affinity: all, Effective: []int{0}, Node: 0, Hits: 41},
		{N: 1, Chip: "IO-APIC", HW: 1, Trigger: "edge", Name: "i8042", Affinity: all, Effective: []int{0}, Node: 0, Hits: 9},
		{N: 4, Chip: "IO-APIC", HW: 4, Trigger: "edge", Name: "ttyS0", Affinity: all, Effective: []int{3}, Node: 0, Hits: 1201},
		{N: 9, Chip: "IO-APIC", HW: 9, Trigger: "fasteoi", Name: "acpi", Affinity: all, Effective: []int{0}, Node: 0, Hits: 0},
	}
	dev := func(n int, bus, name string, hw int, aff, eff []int, hits uint64) IRQ {
		return IRQ{N: n, Chip: "PCI-MSIX-" + bus, HW: hw, Trigger: "edge", Name: name, Affinity: aff, Effective: eff, Node: -1, Hits: hits}
	}
	// virtio0: the disk (four request queues, one per 4 CPUs).
	irqs = append(irqs, dev(24, "0000:00:02.0", "virtio0-config", 0, all, []int{1}, 0))
	for q := 0; q < 4; q++ {
		irqs = append(irqs, dev(25+q, "0000:00:02.0", fmt.Sprintf("virtio0-req.%d", q), q+1, Range(4*q, 4*q+3), []int{4 * q}, 88000))
	}
	// virtio1: the NIC, config then input.N/output.N pairs.
	const bus = "0000:00:03.0"
	msi := []int{30}
	irqs = append(irqs, dev(30, bus, "virtio1-config", 0, all, []int{2}, 0))
	xps := map[int][]int{}
	for q := 0; q < 8; q++ {
		pair := []int{2 * q, 2*q + 1}
		xps[q] = pair
		in, out := 31+2*q, 32+2*q
		msi = append(msi, in, out)
		irqs = append(irqs, dev(in, bus, fmt.Sprintf("virtio1-input.%d", q), 1+2*q, pair, []int{2 * q}, uint64(7100000+q*131)))
		irqs = append(irqs, dev(out, bus, fmt.Sprintf("virtio1-output.%d", q), 2+2*q, pair, []int{2*q + 1}, uint64(1900+q)))
	}
	// virtio2: the balloon.
	for i, name := range []string{"config", "inflate", "deflate", "stats"} {
		irqs = append(irqs, dev(50+i, "0000:00:04.0", "virtio2-"+name, i, all, []int{i}, 0))
	}
	zero := func(int) string { return Mask(nil, ncpu) }
	eth0 := NIC{Name: "eth0", Driver: "virtio_net", DriverBus: "virtio", PCIDev: "/sys/devices/pci0000:00/" + bus,
		Device: "/sys/devices/pci0000:00/" + bus + "/virtio1", NUMANode: -1, LocalCPUs: "0-15", MSI: msi,
		MTU: 1500, Speed: -1, Oper: "up", Addr: "52:54:00:8c:2e:11", Duplex: "unknown", TxQLen: 1000, RxQ: 8, TxQ: 8,
		RPS: zero, XPS: func(q int) string { return Mask(xps[q], ncpu) },
		Addrs:   []string{"10.10.1.5/24", "fe80::5054:ff:fe8c:2e11/64"},
		Ethtool: `{"driver":"virtio_net","version":"1.0.0","bus_info":"0000:00:03.0","channels":{"max_rx":0,"max_tx":0,"max_other":0,"max_combined":8,"rx":0,"tx":0,"other":0,"combined":8},"ring":{"rx_max":256,"tx_max":256,"rx":256,"tx":256},"coalesce":{"adaptive_rx":false,"adaptive_tx":false,"rx_usecs":0,"rx_frames":1,"tx_usecs":0,"tx_frames":1},"unsupported":["features"]}`,
	}
	lo := NIC{Name: "lo", VirtualDir: "/sys/devices/virtual/net/lo", MTU: 65536, Speed: -1, Oper: "unknown",
		Addr: "00:00:00:00:00:00", Duplex: "unknown", RxQ: 1, TxQ: 1, RPS: zero, XPS: func(int) string { return "" },
		Addrs: []string{"127.0.0.1/8", "::1/128"}}
	return irqs, []NIC{eth0, lo}
}

func virtioProcs(netns uint64) ([]Proc, map[string][]Sock) {
	const pid = 812
	socks := []Sock{
		{Local: "127.0.0.1", LPort: 6379, Remote: "0.0.0.0", State: 0x0A, Inode: 18201},
		{V6: true, Local: "::1", LPort: 6379, Remote: "::", State: 0x0A, Inode: 18202},
		{Local: "127.0.0.1", LPort: 6379, Remote: "127.0.0.1", RPort: 51234, State: 0x01, Inode: 18300},
		{Local: "127.0.0.1", LPort: 51234, Remote: "127.0.0.1", RPort: 6379, State: 0x01, Inode: 18301},
		{Local: "0.0.0.0", LPort: 22, Remote: "0.0.0.0", State: 0x0A, Inode: 15001},
	}
	fds := map[int]string{0: "/dev/null", 1: "/dev/null", 2: "/dev/null", 5: "anon_inode:[eventpoll]",
		6: "socket:[18201]", 7: "socket:[18202]", 8: "socket:[18300]"}
	redis := Proc{PID: pid, Comm: "redis-server", Cmdline: []string{"/usr/bin/redis-server 127.0.0.1:6379"}, Detailed: true,
		Threads:     redisThreads(pid, []int{2, 9, 9, 11, 5}, 0),
		CpusAllowed: "0-15", Mems: "0", VmRSSkB: 6291456, AnonHugekB: 3129344,
		NUMAMaps: "55fd2e800000 default file=/usr/bin/redis-check-rdb mapped=1536 N0=1536 kernelpagesize_kB=4\n7f4c00000000 default anon=1572864 dirty=1572864 N0=1572864 kernelpagesize_kB=4\n",
		NoFile:   [2]string{"65535", "65535"}, NetNS: netns, Fds: fds,
		Cgroup: "0::/system.slice/redis-server.service\n",
	}
	return []Proc{{PID: 1, Comm: "systemd"}, {PID: 433, Comm: "sshd"}, redis, {PID: 1204, Comm: "redis-cli"}},
		map[string][]Sock{"/proc/net": socks}
}
