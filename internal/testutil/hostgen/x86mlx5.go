package hostgen

import "fmt"

// X86Mlx5 models a 2-socket Cascade Lake server (2 x Xeon Gold 6248, 20
// cores, Hyper-Threading: 80 CPUs; Intel numbering, so the siblings of 0-39
// are 40-79) on Ubuntu 22.04 (5.15): a ConnectX-5 (mlx5_core) on socket 1
// with 40 completion vectors for 32 channels, four of them left at the
// all-CPUs default and delivered on node 0; an onboard X722 (i40e, down)
// on socket 0; irqbalance running with CPUs 0,40 banned; redis-server 7.2
// as a systemd service with io-threads 4 and a CPU quota that throttles;
// a second redis-server in a Docker container (its own network namespace,
// cpuset 20-23). See testdata/hosts/x86-2socket-mlx5/SOURCE.
func X86Mlx5() *Machine {
	const ncpu = 80
	smt := true
	coreIDs := []int{0, 1, 2, 3, 4, 8, 9, 10, 11, 12, 16, 17, 18, 19, 20, 24, 25, 26, 27, 28}
	m := &Machine{
		Release:  "5.15.0-91-generic",
		Version:  "Linux version 5.15.0-91-generic (buildd@lcy02-amd64-045) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #101-Ubuntu SMP Tue Nov 14 13:30:08 UTC 2023",
		Cmdline:  "BOOT_IMAGE=/boot/vmlinuz-5.15.0-91-generic root=UUID=6f1c3b2e-2d1a-4c55-9a5e-0b7f3c2a9d41 ro intel_iommu=on iommu=pt quiet",
		Hostname: "redis-db-07",
		CPUInfo: func(c int) string {
			rem := c % 40
			return fmt.Sprintf("processor\t: %d\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz\nstepping\t: 7\nphysical id\t: %d\nsiblings\t: 40\ncore id\t\t: %d\ncpu cores\t: 20\nflags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe syscall nx pdpe1gb rdtscp lm constant_tsc art arch_perfmon pebs bts rep_good nopl xtopology nonstop_tsc cpuid aperfmperf pni pclmulqdq dtes64 monitor ds_cpl vmx smx est tm2 ssse3 sdbg fma cx16 xtpr pdcm pcid dca sse4_1 sse4_2 x2apic movbe popcnt tsc_deadline_timer aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch avx512f avx512dq avx512cd avx512bw avx512vl avx512_vnni\n",
				c, rem/20, coreIDs[rem%20])
		},
		NCPU: ncpu,
		Topo: func(c int) Topo {
			rem := c % 40
			return Topo{Package: rem / 20, Core: coreIDs[rem%20], Cluster: -1, Die: 0, Siblings: []int{rem, rem + 40}, Online: true}
		},
		Nodes:      [][]int{append(Range(0, 19), Range(40, 59)...), append(Range(20, 39), Range(60, 79)...)},
		NodeMemKB:  []uint64{197870016, 198180864},
		Distances:  [][]int{{10, 21}, {21, 10}},
		SMT:        &smt,
		Freq:       &Freq{Driver: "intel_pstate", Governor: "powersave", Governors: "performance powersave", EPP: "balance_performance", CurKHz: 1000000, MinKHz: 1000000, MaxKHz: 3900000, HWMinKHz: 1000000, HWMaxKHz: 3900000},
		IdleDriver: "intel_idle", IdleGov: "menu",
		Idle:         []Idle{{Name: "POLL"}, {Name: "C1", Latency: 2, Residency: 2}, {Name: "C1E", Latency: 10, Residency: 20}, {Name: "C6", Latency: 133, Residency: 600}},
		Clocksource:  "tsc",
		Clocksources: "tsc hpet acpi_pm",
		DMIVendor:    "Dell Inc.", DMIProduct: "PowerEdge R740",
		THPEnabled:    "always [madvise] never",
		THPDefrag:     "always defer defer+madvise [madvise] never",
		Sysctls:       baseSysctls(),
		Meminfo:       meminfoText(396050880, 8388604, 0),
		VMStat:        vmstatText(9123456, 4567890, 12, 340),
		IRQStyle:      StyleX86,
		SoftnetFields: 13,
		SelfPID:       52001,
		NetNS:         4026531840,
		Netstat:       netstatText(0, 0),
		Sockstat:      sockstatText(260, 0, 50),
	}
	m.Sysctls["net.ipv4.tcp_max_syn_backlog"] = "2048"
	m.Sysctls["net.core.netdev_budget_usecs"] = "2000"
	m.Sysctls["net.ipv4.tcp_tw_reuse"] = "2"
	m.IRQs, m.NICs = x86Devices(ncpu)
	m.Counters = x86Counters
	m.Procs, m.TCP = x86Procs(m.NetNS)
	m.Files, m.Links = x86Files()
	return m
}

func x86Devices(ncpu int) ([]IRQ, []NIC) {
	all := Range(0, ncpu-1)
	node0 := append(Range(0, 19), Range(40, 59)...)
	node1 := append(Range(20, 39), Range(60, 79)...)
	irqs := []IRQ{
		{N: 0, Chip: "IR-IO-APIC", HW: 2, Trigger: "edge", Name: "timer", Affinity: all, Effective: []int{0}, Node: 0, Hits: 44},
		{N: 8, Chip: "IR-IO-APIC", HW: 8, Trigger: "edge", Name: "rtc0", Affinity: all, Effective: []int{0}, Node: 0, Hits: 1},
		{N: 9, Chip: "IR-IO-APIC", HW: 9, Trigger: "fasteoi", Name: "acpi", Affinity: all, Effective: []int{1}, Node: 0, Hits: 0},
		{N: 24, Chip: "DMAR-MSI", HW: 0, Trigger: "edge", Name: "dmar0", Affinity: all, Effective: []int{2}, Node: 0, Hits: 0},
	}
	const i40eBus, mlxBus = "0000:3d:00.0", "0000:af:00.0"
	i40eMSI := []int{30}
	irqs = append(irqs, IRQ{N: 30, Chip: "IR-PCI-MSI", HW: 31981568, Trigger: "edge", Name: "i40e-" + i40eBus + ":misc", Affinity: node0, Effective: []int{4}, Node: 0, Hits: 2})
	for q := 0; q < 8; q++ {
		n := 31 + q
		i40eMSI = append(i40eMSI, n)
		irqs = append(irqs, IRQ{N: n, Chip: "IR-PCI-MSI", HW: 31981569 + q, Trigger: "edge", Name: fmt.Sprintf("i40e-eno1-TxRx-%d", q),
			Affinity: []int{q}, Effective: []int{q}, Node: 0, Hits: 0})
	}
	for q := 0; q < 4; q++ {
		irqs = append(irqs, IRQ{N: 50 + q, Chip: "IR-PCI-MSI", HW: 1048576 + q, Trigger: "edge", Name: fmt.Sprintf("nvme0q%d", q),
			Affinity: []int{q * 10}, Effective: []int{q * 10}, Node: 0, Hits: uint64(90000 + q)})
	}
	mlxMSI := []int{100}
	irqs = append(irqs, IRQ{N: 100, Chip: "IR-PCI-MSI", HW: 91750400, Trigger: "edge", Name: "mlx5_async0@pci:" + mlxBus, Affinity: node1, Effective: []int{20}, Node: 1, Hits: 3455})
	for v := 0; v < 40; v++ {
		n := 101 + v
		mlxMSI = append(mlxMSI, n)
		aff, eff := []int{node1[v%len(node1)]}, []int{node1[v%len(node1)]}
		if v >= 28 && v < 32 { // never placed: the all-CPUs default, delivered on node 0
			aff, eff = all, []int{v - 28}
		}
		irqs = append(irqs, IRQ{N: n, Chip: "IR-PCI-MSI", HW: 91750401 + v, Trigger: "edge", Name: fmt.Sprintf("mlx5_comp%d@pci:%s", v, mlxBus),
			Affinity: aff, Effective: eff, Node: 1, Hits: uint64(2000000 + 7919*v)})
	}
	zero := func(int) string { return Mask(nil, ncpu) }
	mlx := NIC{Name: "ens2f0np0", Driver: "mlx5_core", DriverBus: "pci", Device: "/sys/devices/pci0000:ae/0000:ae:00.0/" + mlxBus,
		NUMANode: 1, LocalCPUs: "20-39,60-79", MSI: mlxMSI, MTU: 9000, Speed: 100000, Oper: "up", Addr: "b8:ce:f6:0a:1c:40",
		Duplex: "full", TxQLen: 1000, RxQ: 32, TxQ: 32, RPS: zero,
		XPS:     func(q int) string { return Mask([]int{node1[q]}, ncpu) },
		Ethtool: `{"driver":"mlx5_core","version":"5.15.0-91-generic","firmware":"16.35.2000 (DEL0000000015)","bus_info":"0000:af:00.0","channels":{"max_rx":0,"max_tx":0,"max_other":0,"max_combined":63,"rx":0,"tx":0,"other":0,"combined":32},"ring":{"rx_max":8192,"tx_max":8192,"rx":1024,"tx":1024},"coalesce":{"adaptive_rx":true,"adaptive_tx":true,"rx_usecs":8,"rx_frames":128,"tx_usecs":16,"tx_frames":32},"features":{"rx-checksum":true,"tx-checksum-ip-generic":true,"generic-receive-offload":true,"large-receive-offload":false,"rx-hashing":true,"ntuple-filters":false}}`,
	}
	mlx.PCIDev = mlx.Device
	i40e := NIC{Name: "eno1", Driver: "i40e", DriverBus: "pci", Device: "/sys/devices/pci0000:3a/0000:3a:00.0/" + i40eBus,
		NUMANode: 0, LocalCPUs: "0-19,40-59", MSI: i40eMSI, MTU: 1500, Speed: -1, Oper: "down", Addr: "e4:43:4b:1f:82:a0",
		Duplex: "unknown", TxQLen: 1000, RxQ: 8, TxQ: 8, RPS: zero, XPS: func(q int) string { return Mask([]int{q}, ncpu) }}
	i40e.PCIDev = i40e.Device
	lo := NIC{Name: "lo", VirtualDir: "/sys/devices/virtual/net/lo", MTU: 65536, Speed: -1, Oper: "unknown",
		Addr: "00:00:00:00:00:00", Duplex: "unknown", RxQ: 1, TxQ: 1, RPS: zero, XPS: func(int) string { return "" }}
	lo.Addrs = []string{"127.0.0.1/8", "::1/128"}
	docker0 := NIC{Name: "docker0", VirtualDir: "/sys/devices/virtual/net/docker0", MTU: 1500, Speed: -1, Oper: "up",
		Addr: "02:42:5c:1e:0b:7a", Duplex: "unknown", RxQ: 1, TxQ: 1, RPS: zero, XPS: func(int) string { return "" },
		Addrs: []string{"172.17.0.1/16"}}
	// The server's address is on a VLAN over the mlx5 port.
	vlan := NIC{Name: "ens2f0np0.100", VirtualDir: "/sys/devices/virtual/net/ens2f0np0.100", MTU: 9000, Speed: 100000,
		Oper: "up", Addr: "b8:ce:f6:0a:1c:40", Duplex: "full", RxQ: 1, TxQ: 1, RPS: zero, XPS: func(int) string { return "" },
		Addrs: []string{"10.0.0.7/24"}, Lower: []string{"ens2f0np0"}}
	mlx.Addrs, i40e.Addrs = []string{"fe80::bace:f6ff:fe0a:1c40/64"}, []string{}
	return irqs, []NIC{mlx, i40e, lo, docker0, vlan}
}

// x86Counters are x86's named rows.
func x86Counters(int) []Counter {
	rows := []struct {
		name, desc string
		mult       uint64
	}{
		{"NMI", "Non-maskable interrupts", 91}, {"LOC", "Local timer interrupts", 1834567}, {"SPU", "Spurious interrupts", 0},
		{"PMI", "Performance monitoring interrupts", 91}, {"IWI", "IRQ work interrupts", 3}, {"RTR", "APIC ICR read retries", 0},
		{"RES", "Rescheduling interrupts", 88123}, {"CAL", "Function call interrupts", 12345}, {"TLB", "TLB shootdowns", 4567},
		{"TRM", "Thermal event interrupts", 0}, {"THR", "Threshold APIC interrupts", 0}, {"DFR", "Deferred Error APIC interrupts", 0},
		{"MCE", "Machine check exceptions", 0}, {"MCP", "Machine check polls", 312},
	}
	var out []Counter
	for _, r := range rows {
		mult := r.mult
		out = append(out, Counter{Name: r.name, Desc: r.desc, PerCPU: func(c int) uint64 { return mult * uint64(c%7+1) }})
	}
	return append(out, Counter{Name: "ERR"}, Counter{Name: "MIS"})
}

func x86Procs(netns uint64) ([]Proc, map[string][]Sock) {
	const pid, cpid = 31337, 40001
	const containerNS = 4026532999
	hostSocks, hostFds := clientSockets("10.0.0.7", "10.0.0.21", 6379, 64, 50, 910001)
	redis := Proc{PID: pid, Comm: "redis-server", Cmdline: []string{"/usr/bin/redis-server 0.0.0.0:6379"}, Detailed: true,
		Threads:     redisThreads(pid, []int{44, 46, 47, 48, 9, 25, 66, 3}, 3),
		CpusAllowed: "0-79", Mems: "0-1", VmRSSkB: 25165824, VmSwapkB: 1360,
		NUMAMaps: "55d0c0a00000 default file=/usr/bin/redis-server mapped=1540 N0=1540 kernelpagesize_kB=4\n" +
			"7f1a00000000 default anon=3145728 dirty=3145728 active=0 N0=2011234 N1=1134494 kernelpagesize_kB=4\n" +
			"7f2c40000000 default anon=2048 dirty=2048 N1=2048 kernelpagesize_kB=4\n",
		NoFile: [2]string{"65535", "65535"}, NetNS: netns, Fds: hostFds,
		Cgroup: "0::/system.slice/redis-server.service\n",
	}
	ctrSocks, ctrFds := clientSockets("172.17.0.2", "172.17.0.1", 6379, 12, 0, 998001)
	ctr := Proc{PID: cpid, Comm: "redis-server", Cmdline: []string{"redis-server *:6379"}, Detailed: true,
		Threads:     redisThreads(cpid, []int{21, 22, 23, 20, 22}, 0),
		CpusAllowed: "20-23", Mems: "1", VmRSSkB: 1048576,
		NUMAMaps: "5609f2e00000 default file=/usr/local/bin/redis-server mapped=1400 N1=1400 kernelpagesize_kB=4\n7f33a0000000 default anon=262144 dirty=262144 N1=262144 kernelpagesize_kB=4\n",
		NoFile:   [2]string{"1048576", "1048576"}, NetNS: containerNS, Fds: ctrFds,
		Cgroup: "0::/system.slice/docker-3f2a9c7d1e5b.scope\n",
	}
	procs := []Proc{{PID: 1, Comm: "systemd"}, {PID: 1290, Comm: "irqbalance"}, {PID: 1701, Comm: "containerd"},
		{PID: 1833, Comm: "dockerd"}, redis, ctr}
	return procs, map[string][]Sock{"/proc/net": hostSocks, fmt.Sprintf("/proc/%d/net", cpid): ctrSocks}
}

func x86Files() (map[string]string, map[string]string) {
	const svc = "/sys/fs/cgroup/system.slice/redis-server.service"
	const ctr = "/sys/fs/cgroup/system.slice/docker-3f2a9c7d1e5b.scope"
	const ns = "/netns/4026532999/proc/sys/net"
	files := map[string]string{
		"/proc/52001/mountinfo": "24 29 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n" +
			"25 29 0:23 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc rw\n" +
			"29 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw\n" +
			"35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
		"/proc/1/cgroup":                        "0::/init.scope\n",
		svc + "/cpuset.cpus.effective":          "0-79\n",
		svc + "/cpuset.mems.effective":          "0-1\n",
		svc + "/cpu.max":                        "200000 100000\n",
		svc + "/cpu.stat":                       "usage_usec 912345678\nuser_usec 512345678\nsystem_usec 400000000\nnr_periods 183345\nnr_throttled 2210\nthrottled_usec 45678901\n",
		svc + "/memory.max":                     "34359738368\n",
		ctr + "/cpuset.cpus.effective":          "20-23\n",
		ctr + "/cpuset.mems.effective":          "1\n",
		ctr + "/cpu.max":                        "max 100000\n",
		ctr + "/cpu.stat":                       "usage_usec 71234567\nuser_usec 41234567\nsystem_usec 30000000\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n",
		ctr + "/memory.max":                     "4294967296\n",
		"/proc/40001/net/netstat":               netstatText(312, 0),
		"/proc/40001/net/sockstat":              sockstatText(14, 0, 0),
		ns + "/core/somaxconn":                  "511\n",
		ns + "/ipv4/tcp_max_syn_backlog":        "512\n",
		ns + "/ipv4/tcp_max_tw_buckets":         "262144\n",
		ns + "/ipv4/tcp_rmem":                   "4096\t131072\t6291456\n",
		ns + "/ipv4/tcp_wmem":                   "4096\t16384\t4194304\n",
		ns + "/ipv4/tcp_fin_timeout":            "60\n",
		ns + "/ipv4/tcp_tw_reuse":               "2\n",
		ns + "/ipv4/tcp_syncookies":             "1\n",
		ns + "/ipv4/ip_local_port_range":        "32768\t60999\n",
		ns + "/ipv4/ip_local_reserved_ports":    "\n",
		ns + "/ipv4/ip_unprivileged_port_start": "0\n",
		"/etc/default/irqbalance":               "#Configuration for the irqbalance daemon\n\n#Should irqbalance be enabled?\nENABLED=\"1\"\n#Balance the IRQs only once?\nONESHOT=\"0\"\n# keep the housekeeping CPU and its sibling free of device IRQs\nIRQBALANCE_BANNED_CPULIST=0,40\n",
	}
	links := map[string]string{
		"/etc/systemd/system/multi-user.target.wants/irqbalance.service": "/lib/systemd/system/irqbalance.service",
	}
	return files, links
}
