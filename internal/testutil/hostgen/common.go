package hostgen

import (
	"fmt"
	"strings"
)

// Models lists the machines by fixture name.
var Models = map[string]func() *Machine{
	"kunpeng920-4node-hinic": Kunpeng920,
	"x86-2socket-mlx5":       X86Mlx5,
	"kvm-virtio-multiqueue":  VirtioVM,
}

// baseSysctls are a 6.x kernel's defaults for the sysctls redline reads;
// models override what differs. Multi-value ones are tab-separated, as the
// kernel prints them.
func baseSysctls() map[string]string {
	return map[string]string{
		"net.core.somaxconn":                  "4096",
		"net.core.netdev_max_backlog":         "1000",
		"net.core.netdev_budget":              "300",
		"net.core.netdev_budget_usecs":        "8000",
		"net.core.rps_sock_flow_entries":      "0",
		"net.core.busy_read":                  "0",
		"net.core.busy_poll":                  "0",
		"net.core.rmem_max":                   "212992",
		"net.core.wmem_max":                   "212992",
		"net.core.rmem_default":               "212992",
		"net.core.wmem_default":               "212992",
		"net.ipv4.tcp_max_syn_backlog":        "4096",
		"net.ipv4.tcp_max_tw_buckets":         "262144",
		"net.ipv4.tcp_rmem":                   "4096\t131072\t6291456",
		"net.ipv4.tcp_wmem":                   "4096\t16384\t4194304",
		"net.ipv4.tcp_mem":                    "6179328\t8239104\t12358656",
		"net.ipv4.tcp_fin_timeout":            "60",
		"net.ipv4.tcp_tw_reuse":               "2",
		"net.ipv4.tcp_syncookies":             "1",
		"net.ipv4.tcp_slow_start_after_idle":  "1",
		"net.ipv4.tcp_notsent_lowat":          "4294967295",
		"net.ipv4.tcp_fastopen":               "1",
		"net.ipv4.ip_local_port_range":        "32768\t60999",
		"net.ipv4.ip_local_reserved_ports":    "",
		"net.ipv4.ip_unprivileged_port_start": "1024",
		"vm.overcommit_memory":                "0",
		"vm.overcommit_ratio":                 "50",
		"vm.swappiness":                       "60",
		"vm.zone_reclaim_mode":                "0",
		"vm.max_map_count":                    "65530",
		"vm.dirty_ratio":                      "20",
		"vm.dirty_background_ratio":           "10",
		"kernel.numa_balancing":               "1",
		"kernel.sched_autogroup_enabled":      "1",
		"kernel.pid_max":                      "4194304",
		"fs.file-max":                         "9223372036854775807",
		"fs.nr_open":                          "1048576",
		"fs.file-nr":                          "3264\t0\t9223372036854775807",
	}
}

// meminfoText writes /proc/meminfo for a machine with totalKB of memory.
func meminfoText(totalKB, swapKB, anonHugeKB uint64) string {
	free := totalKB * 8 / 10
	rows := []struct {
		name string
		kb   uint64
	}{
		{"MemTotal", totalKB}, {"MemFree", free}, {"MemAvailable", free + totalKB/20},
		{"Buffers", 204800}, {"Cached", totalKB / 20}, {"SwapCached", 0},
		{"SwapTotal", swapKB}, {"SwapFree", swapKB}, {"AnonPages", totalKB / 10},
		{"Shmem", 65536}, {"CommitLimit", totalKB/2 + swapKB}, {"Committed_AS", totalKB / 8},
		{"AnonHugePages", anonHugeKB}, {"ShmemHugePages", 0},
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%-16s%8d kB\n", r.name+":", r.kb)
	}
	b.WriteString("HugePages_Total:       0\nHugePages_Free:        0\nHugePages_Rsvd:        0\nHugePages_Surp:        0\n")
	b.WriteString("Hugepagesize:       2048 kB\n")
	return b.String()
}

// vmstatText writes the /proc/vmstat counters redline reads, with some
// neighbours.
func vmstatText(hint, migrated, swapIn, swapOut uint64) string {
	return fmt.Sprintf(`nr_free_pages 31000000
nr_anon_pages 1200000
pgpgin 8123456
pgpgout 20345678
pswpin %d
pswpout %d
pgmajfault 10234
numa_hit 912345678
numa_miss 1234567
numa_pte_updates %d
numa_huge_pte_updates 0
numa_hint_faults %d
numa_hint_faults_local %d
numa_pages_migrated %d
compact_stall 0
thp_fault_alloc 512
`, swapIn, swapOut, hint*2, hint, hint*7/10, migrated)
}

// netstatText writes /proc/net/netstat's TcpExt and IpExt sections (a
// subset of the kernel's columns, in its order).
func netstatText(listenOverflows, twOverflow uint64) string {
	names := []string{"SyncookiesSent", "SyncookiesRecv", "SyncookiesFailed", "EmbryonicRsts", "PruneCalled",
		"TW", "TWRecycled", "TWKilled", "PAWSEstab", "DelayedACKs", "ListenOverflows", "ListenDrops",
		"TCPHPHits", "TCPTimeouts", "TCPBacklogDrop", "TCPTimeWaitOverflow", "TCPOrigDataSent"}
	vals := []uint64{0, 0, 0, 12, 0, 183422, 0, 0, 3, 99123, listenOverflows, listenOverflows,
		7712345, 41, 0, twOverflow, 812345678}
	var hdr, row strings.Builder
	hdr.WriteString("TcpExt:")
	row.WriteString("TcpExt:")
	for i, n := range names {
		fmt.Fprintf(&hdr, " %s", n)
		fmt.Fprintf(&row, " %d", vals[i])
	}
	return hdr.String() + "\n" + row.String() + "\nIpExt: InNoRoutes InTruncatedPkts InOctets OutOctets\nIpExt: 0 0 91234567890 81234567890\n"
}

func sockstatText(inuse, orphan, tw int) string {
	return fmt.Sprintf("sockets: used %d\nTCP: inuse %d orphan %d tw %d alloc %d mem 38\nUDP: inuse 4 mem 2\nUDPLITE: inuse 0\nRAW: inuse 0\nFRAG: inuse 0 memory 0\n",
		inuse+40, inuse, orphan, tw, inuse+3)
}

// redisThreads are a Redis 6/7 server's threads: the main thread, three
// bio threads, jemalloc's background thread and io threads.
func redisThreads(pid int, cpus []int, io int) []Thread {
	names := []string{"redis-server", "bio_close_file", "bio_aof_fsync", "bio_lazy_free", "jemalloc_bg_thd"}
	for i := 1; i <= io; i++ {
		names = append(names, fmt.Sprintf("io_thd_%d", i))
	}
	var out []Thread
	for i, n := range names {
		th := Thread{TID: pid + i, Comm: n, State: "S", CPU: cpus[i%len(cpus)]}
		if i == 0 {
			th.State, th.UTime, th.STime = "R", 912345, 1534567
		}
		if strings.HasPrefix(n, "io_thd") {
			th.UTime, th.STime = 123456, 345678
		}
		out = append(out, th)
	}
	return out
}

// clientSockets returns a listener pair on port and n established client
// connections from client, plus tw TIME_WAIT ones; inodes start at ino.
func clientSockets(server, client string, port, n, tw int, ino uint64) ([]Sock, map[int]string) {
	socks := []Sock{
		{Local: "0.0.0.0", LPort: port, Remote: "0.0.0.0", State: 0x0A, Inode: ino},
		{V6: true, Local: "::", LPort: port, Remote: "::", State: 0x0A, Inode: ino + 1},
	}
	fds := map[int]string{0: "/dev/null", 1: "/dev/null", 2: "/dev/null", 5: "anon_inode:[eventpoll]",
		6: fmt.Sprintf("socket:[%d]", ino), 7: fmt.Sprintf("socket:[%d]", ino+1)}
	for i := 0; i < n; i++ {
		s := Sock{Local: server, LPort: port, Remote: client, RPort: 41000 + i, State: 0x01, Inode: ino + 100 + uint64(i)}
		socks = append(socks, s)
		fds[8+i] = fmt.Sprintf("socket:[%d]", s.Inode)
	}
	for i := 0; i < tw; i++ {
		socks = append(socks, Sock{Local: server, LPort: port, Remote: client, RPort: 39000 + i, State: 0x06})
	}
	return socks, fds
}

func uniformDistances(n int, local, remote int) [][]int {
	d := make([][]int, n)
	for i := range d {
		d[i] = make([]int, n)
		for j := range d[i] {
			d[i][j] = remote
			if i == j {
				d[i][j] = local
			}
		}
	}
	return d
}
