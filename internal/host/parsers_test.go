package host

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Table tests on strings, one per parser. Fixture-tree tests are in
// fixtures_test.go and facts_test.go.

func TestParseCmdline(t *testing.T) {
	got := parseCmdline(`BOOT_IMAGE=/vmlinuz ro isolcpus=2-3 quiet dyndbg="file a.c +p" nohz_full=2-3 -- --init-arg x`)
	want := map[string]string{"BOOT_IMAGE": "/vmlinuz", "ro": "", "isolcpus": "2-3", "quiet": "", "dyndbg": "file a.c +p", "nohz_full": "2-3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseCmdline (-want +got):\n%s", diff)
	}
	if parseCmdline("  ") != nil {
		t.Error("empty command line should give no parameters")
	}
}

func TestParseCPUInfo(t *testing.T) {
	tests := []struct {
		name, in            string
		vendor, model, arch string
		hypervisor          bool
	}{
		{"x86 VM", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\nflags\t\t: fpu hypervisor avx\n\nprocessor\t: 1\nmodel name\t: other\n",
			"GenuineIntel", "Intel(R) Xeon(R) Processor", "x86_64", true},
		{"kunpeng", kunpengCPUBlock, "HiSilicon", "HiSilicon Kunpeng 920 (TaiShan v110)", "aarch64", false},
		{"arm with model name", "processor\t: 0\nmodel name\t: Kunpeng 920-4826\nCPU implementer\t: 0x48\nCPU part\t: 0xd01\n", "HiSilicon", "Kunpeng 920-4826", "aarch64", false},
		{"unknown arm part", "processor\t: 0\nCPU implementer\t: 0x99\nCPU part\t: 0x001\n", "", "", "aarch64", false},
		{"empty", "", "", "", "", false},
	}
	for _, tt := range tests {
		ci := parseCPUInfo([]byte(tt.in))
		if ci.vendor != tt.vendor || ci.model != tt.model || ci.arch != tt.arch || ci.hypervisor != tt.hypervisor {
			t.Errorf("%s: got %+v", tt.name, ci)
		}
	}
}

const kunpengCPUBlock = "processor\t: 0\nBogoMIPS\t: 200.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma dcpop asimddp asimdfhm\nCPU implementer\t: 0x48\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd01\nCPU revision\t: 0\n"

func TestParseNodeMeminfo(t *testing.T) {
	got, err := parseNodeMeminfo([]byte("Node 1 MemTotal:       4286668 kB\nNode 1 MemFree:        3924852 kB\nNode 1 HugePages_Total:     0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if *got["MemTotal"] != 4286668*1024 || *got["MemFree"] != 3924852*1024 || *got["HugePages_Total"] != 0 {
		t.Errorf("got MemTotal %d MemFree %d", *got["MemTotal"], *got["MemFree"])
	}
	for _, bad := range []string{"MemTotal: 1 kB\n", "Node 0 MemTotal: x kB\n"} {
		if _, err := parseNodeMeminfo([]byte(bad)); err == nil {
			t.Errorf("parseNodeMeminfo(%q): no error", bad)
		}
	}
}

func TestParseBracketChoice(t *testing.T) {
	for in, want := range map[string]string{
		"always [madvise] never":                     "madvise",
		"[always] madvise never":                     "always",
		"always defer defer+madvise [madvise] never": "madvise",
		"always defer [defer+madvise] madvise never": "defer+madvise",
	} {
		if got, err := parseBracketChoice(in); err != nil || got != want {
			t.Errorf("parseBracketChoice(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := parseBracketChoice("always madvise never"); err == nil {
		t.Error("no bracket: no error")
	}
}

func TestParseMeminfo(t *testing.T) {
	in := "MemTotal:       24609496 kB\nMemFree:        23800000 kB\nSwapTotal:             0 kB\nAnonHugePages:     43008 kB\nHugePages_Total:       4\nHugepagesize:       2048 kB\nDirectMap4k: 1 kB\n"
	m, err := parseMeminfo([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if *m.MemTotal != 24609496*1024 || *m.SwapTotal != 0 || *m.AnonHugePages != 43008*1024 || *m.HugePagesTotal != 4 || *m.Hugepagesize != 2048*1024 {
		t.Errorf("got %+v", m)
	}
	if m.Cached != nil {
		t.Error("Cached is absent from the input but set")
	}
	_, err = parseMeminfo([]byte("MemTotal: 1 kB\nSwapTotal: lots kB\n"))
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 {
		t.Errorf("malformed value: %v, want a ParseError on line 2", err)
	}
}

func TestParseVMStat(t *testing.T) {
	v, err := parseVMStat([]byte("nr_free_pages 1\nnuma_hint_faults 12\nnuma_pages_migrated 3\npswpin 0\npswpout 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	if *v.NUMAHintFaults != 12 || *v.NUMAPagesMigrated != 3 || *v.PswpIn != 0 || *v.PswpOut != 7 || v.PgMajFault != nil {
		t.Errorf("got %+v", v)
	}
	if _, err := parseVMStat([]byte("pswpin -1\n")); err == nil {
		t.Error("negative counter: no error")
	}
}

func TestSysctlsAccessors(t *testing.T) {
	s := Sysctls{"a": "4096", "b": normalizeSysctl("4096\t131072\t6291456\n"), "c": "x"}
	if s["b"] != "4096 131072 6291456" {
		t.Errorf("normalizeSysctl = %q", s["b"])
	}
	if v, ok := s.Int("a"); !ok || v != 4096 {
		t.Errorf("Int(a) = %d %v", v, ok)
	}
	if _, ok := s.Int("c"); ok {
		t.Error("Int of a non-number is ok")
	}
	if _, ok := s.Int("missing"); ok {
		t.Error("Int of a missing sysctl is ok")
	}
	if v, ok := s.Ints("b"); !ok || len(v) != 3 || v[2] != 6291456 {
		t.Errorf("Ints(b) = %v %v", v, ok)
	}
	if SysctlPath("fs.file-max") != "/proc/sys/fs/file-max" {
		t.Error(SysctlPath("fs.file-max"))
	}
}

func TestParseSoftnet(t *testing.T) {
	// 6.x: 15 columns with the CPU number in column 13.
	six := "0000006a 00000001 00000002 00000000 00000000 00000000 00000000 00000000 00000000 00000003 00000004 00000005 00000007 00000000 00000000\n"
	rows, err := parseSoftnet([]byte(six), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Softnet{CPU: 7, Processed: 0x6a, Dropped: 1, TimeSqueeze: 2, ReceivedRPS: 3, FlowLimit: 4, BacklogLen: u64Ptr(5)}
	if diff := cmp.Diff([]Softnet{want}, rows); diff != "" {
		t.Errorf("6.x row (-want +got):\n%s", diff)
	}
	// 4.x: 11 columns, rows are the online CPUs in order.
	old := "00000010 00000000 00000001 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n00000020 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
	online := NewCPUSet(0, 5)
	rows, err = parseSoftnet([]byte(old), &online)
	if err != nil || len(rows) != 2 || rows[1].CPU != 5 || rows[1].Processed != 0x20 || rows[0].BacklogLen != nil {
		t.Errorf("4.x rows %+v, %v", rows, err)
	}
	for _, bad := range []string{"0000006a 00000001\n", "zz 0 0 0 0 0 0 0 0 0 0\n"} {
		if _, err := parseSoftnet([]byte(bad), nil); err == nil {
			t.Errorf("parseSoftnet(%q): no error", bad)
		}
	}
}

func TestParseSoftirqs(t *testing.T) {
	in := "                    CPU0       CPU1       \n          HI:          0          0\n      NET_TX:          6          0\n      NET_RX:       1846       2007\n"
	s, err := ParseSoftirqs([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.CPUs, []int{0, 1}) || s.Counts["NET_RX"][1] != 2007 || s.Counts["NET_TX"][0] != 6 {
		t.Errorf("got %+v", s)
	}
	if _, err := ParseSoftirqs([]byte("CPU0 CPU1\nNET_RX: 1\n")); err == nil {
		t.Error("short row: no error")
	}
	if _, err := ParseSoftirqs(nil); err == nil {
		t.Error("empty file: no error")
	}
}

func TestParseNetstat(t *testing.T) {
	in := "TcpExt: SyncookiesSent ListenOverflows ListenDrops TCPTimeWaitOverflow\nTcpExt: 0 12 13 2\nIpExt: InNoRoutes\nIpExt: 4\n"
	got, err := parseNetstat([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]uint64{
		"TcpExt": {"SyncookiesSent": 0, "ListenOverflows": 12, "ListenDrops": 13, "TCPTimeWaitOverflow": 2},
		"IpExt":  {"InNoRoutes": 4},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseNetstat (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"TcpExt: A B\nTcpExt: 1\n", "TcpExt: A\n", "TcpExt: A\nTcpExt: x\n", "TcpExt: A\nIpExt: 1\n"} {
		if _, err := parseNetstat([]byte(bad)); err == nil {
			t.Errorf("parseNetstat(%q): no error", bad)
		}
	}
}

func TestParseSockstat(t *testing.T) {
	got, err := parseSockstat([]byte("sockets: used 14\nTCP: inuse 2 orphan 0 tw 10 alloc 3 mem 197\nFRAG: inuse 0 memory 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got["TCP"]["tw"] != 10 || got["sockets"]["used"] != 14 || got["FRAG"]["memory"] != 0 {
		t.Errorf("got %v", got)
	}
	if _, err := parseSockstat([]byte("TCP: inuse\n")); err == nil {
		t.Error("unpaired field: no error")
	}
}

func TestParseTaskStat(t *testing.T) {
	// comm may hold spaces and parentheses: fields count from the last ")".
	line := "4242 (redis (x) y) S 1 4242 4242 0 -1 4194560 120 0 0 0 17 3 0 0 20 0 5 0 1203 7000000 2000 18446744073709551615 1 1 0 0 0 0 0 4096 17663 0 0 0 17 5 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
	st, err := ParseTaskStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if st.Comm != "redis (x) y" || st.State != "S" || st.UTime != 17 || st.STime != 3 || st.CPU != 5 {
		t.Errorf("got %+v", st)
	}
	for _, bad := range []string{"4242 redis S 1", "4242 (redis) S 1 2 3", "4242 (r) S 1 4242 4242 0 -1 4194560 120 0 0 0 x 3 0 0 20 0 5 0 1203 7000000 2000 1 1 1 0 0 0 0 0 4096 17663 0 0 0 17 5"} {
		if _, err := ParseTaskStat([]byte(bad)); err == nil {
			t.Errorf("ParseTaskStat(%q): no error", bad)
		}
	}
}

func TestThreadRole(t *testing.T) {
	for _, tt := range []struct {
		tid  int
		comm string
		want string
	}{{100, "redis-server", "main"}, {101, "io_thd_3", "io"}, {102, "bio_lazy_free", "bio"}, {103, "jemalloc_bg_thd", "jemalloc"}, {104, "redis-rdb-bgsave", "other"}} {
		if got := threadRole(100, tt.tid, tt.comm); got != tt.want {
			t.Errorf("threadRole(%d, %q) = %q, want %q", tt.tid, tt.comm, got, tt.want)
		}
	}
}

func TestParseProcStatus(t *testing.T) {
	st, err := parseProcStatus([]byte("Name:\tredis-server\nVmRSS:\t    8812 kB\nVmSwap:\t       4 kB\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\nMems_allowed_list:\t0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if st.cpus.String() != "0-1" || st.mems.String() != "0" || *st.vmRSS != 8812*1024 || *st.vmSwap != 4096 {
		t.Errorf("got %+v", st)
	}
	if _, err := parseProcStatus([]byte("Cpus_allowed_list:\t0-x\n")); err == nil {
		t.Error("bad cpulist: no error")
	}
}

func TestParseSmapsRollup(t *testing.T) {
	v, err := parseSmapsRollup([]byte("561bf32d4000-7ffcd2569000 ---p 00000000 00:00 0  [rollup]\nRss:   1764 kB\nAnonHugePages:   2048 kB\n"))
	if err != nil || v == nil || *v != 2048*1024 {
		t.Errorf("got %v, %v", v, err)
	}
	if v, err := parseSmapsRollup([]byte("Rss: 1 kB\n")); v != nil || err != nil {
		t.Errorf("absent AnonHugePages: %v, %v", v, err)
	}
}

func TestParseNUMAMaps(t *testing.T) {
	in := "56520d12e000 default anon=1 dirty=1 active=0 N0=1 kernelpagesize_kB=4\n" +
		"7f2a40000000 bind:1 anon=512 dirty=512 N1=512 kernelpagesize_kB=2048\n" +
		"7f2a80000000 interleave:0-1 anon=10 N0=6 N1=4 kernelpagesize_kB=4\n" +
		"7f2b00000000 default\n"
	pages, byteCount, err := parseNUMAMaps([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[int]uint64{0: 7, 1: 516}, pages); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	if byteCount[1] != 512*2048*1024+4*4096 || byteCount[0] != 7*4096 {
		t.Errorf("bytes %v", byteCount)
	}
	if _, _, err := parseNUMAMaps([]byte("7f default N0=x kernelpagesize_kB=4\n")); err == nil {
		t.Error("bad count: no error")
	}
}

func TestParseOpenFilesLimit(t *testing.T) {
	in := "Limit                     Soft Limit           Hard Limit           Units     \nMax open files            20000                unlimited            files     \n"
	got, err := parseOpenFilesLimit([]byte(in))
	if err != nil || got == nil || got.Soft != 20000 || got.Hard != -1 {
		t.Errorf("got %+v, %v", got, err)
	}
	if got, err := parseOpenFilesLimit([]byte("Limit Soft\n")); got != nil || err != nil {
		t.Errorf("missing line: %+v, %v", got, err)
	}
	if _, err := parseOpenFilesLimit([]byte("Max open files  many  some  files\n")); err == nil {
		t.Error("bad values: no error")
	}
}

func TestParseNSLink(t *testing.T) {
	if ino, err := parseNSLink("net:[4026531833]"); err != nil || ino != 4026531833 {
		t.Errorf("got %d, %v", ino, err)
	}
	for _, bad := range []string{"net:4026531833", "net:[x]", "socket:[12"} {
		if _, err := parseNSLink(bad); err == nil {
			t.Errorf("parseNSLink(%q): no error", bad)
		}
	}
}

func TestParseTCP(t *testing.T) {
	v4 := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 22220 1 0 100 0 0 10 0\n" +
		"   1: 0100007F:18EB 0100007F:C8A2 01 00000000:00000000 00:00000000 00000000   999        0 22230 1 0 100 0 0 10 0\n" +
		"   2: 0100007F:D431 0100007F:18EB 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0\n"
	socks, err := parseTCP([]byte(v4), "tcp")
	if err != nil {
		t.Fatal(err)
	}
	if len(socks) != 3 || socks[0].localPort != 6379 || socks[0].state != tcpListen || socks[0].inode != 22220 || socks[2].remPort != 6379 {
		t.Fatalf("got %+v", socks)
	}
	if a := formatHexAddr(socks[0].local); a != "127.0.0.1" {
		t.Errorf("formatHexAddr = %q", a)
	}
	v6 := "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: 00000000000000000000000001000000:18F6 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 22221 1 0\n" +
		"   1: 0000000000000000FFFF00000100007F:18F6 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 22222 1 0\n"
	socks, err = parseTCP([]byte(v6), "tcp6")
	if err != nil || len(socks) != 2 {
		t.Fatal(socks, err)
	}
	if a := formatHexAddr(socks[0].local); a != "::1" {
		t.Errorf("v6 address %q, want ::1", a)
	}
	if a := formatHexAddr(socks[1].local); a != "127.0.0.1" {
		t.Errorf("v4-mapped address %q, want 127.0.0.1", a)
	}
	sum := summarizeTCP(append(mustTCP(t, v4), socks...), []int{6379, 6390})
	if sum.ByState["LISTEN"] != 3 || sum.ByState["ESTABLISHED"] != 1 || sum.ByState["TIME_WAIT"] != 1 {
		t.Errorf("ByState %v", sum.ByState)
	}
	if p := sum.Ports[0]; p.Port != 6379 || p.FromEstablished != 1 || p.ToTimeWait != 1 || p.ToEstablished != 0 {
		t.Errorf("port 6379 %+v", p)
	}
	for _, bad := range []string{"h\n 0: 0100007F:18EB 00000000:0000 0A 0 0 0 0 0 x\n", "h\n 0: 7F:18EB 00000000:0000 0A 0 0 0 0 0 1\n", "h\n 0: 0100007F:18EB\n"} {
		if _, err := parseTCP([]byte(bad), "tcp"); err == nil {
			t.Errorf("parseTCP(%q): no error", bad)
		}
	}
}

func mustTCP(t *testing.T, s string) []tcpSocket {
	socks, err := parseTCP([]byte(s), "tcp")
	if err != nil {
		t.Fatal(err)
	}
	return socks
}

func TestParseMountinfoAndCgroups(t *testing.T) {
	mi := "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" +
		"32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n" +
		"34 31 0:31 /docker/abc /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n" +
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n" +
		"50 1 0:40 / /mnt/with\\040space ro - ext4 /dev/x rw\n"
	mounts, err := parseMountinfo([]byte(mi))
	if err != nil {
		t.Fatal(err)
	}
	if mounts[4].point != "/mnt/with space" || !contains(mounts[4].options, "ro") {
		t.Errorf("escaped mount point: %+v", mounts[4])
	}
	lines, err := parseProcCgroup([]byte("4:cpu,cpuacct:/user.slice\n3:cpuset:/docker/abc/inner\n0::/init.scope\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ctrl, dir string
		version   int
	}{
		{"cpu", "/sys/fs/cgroup/cpu,cpuacct/user.slice", 1},
		{"cpuset", "/sys/fs/cgroup/cpuset/inner", 1}, // the mount's root is /docker/abc
		{"memory", "/sys/fs/cgroup/unified/init.scope", 2},
	} {
		dir, v, _ := cgroupDir(lines, mounts, tt.ctrl)
		if dir != tt.dir || v != tt.version {
			t.Errorf("cgroupDir(%s) = %q v%d, want %q v%d", tt.ctrl, dir, v, tt.dir, tt.version)
		}
	}
	if _, err := parseMountinfo([]byte("1 2 3\n")); err == nil {
		t.Error("short mountinfo line: no error")
	}
	if _, err := parseProcCgroup([]byte("garbage\n")); err == nil {
		t.Error("bad cgroup line: no error")
	}
}

func TestParseCPUMax(t *testing.T) {
	q, p, err := parseCPUMax("200000 100000")
	if err != nil || *q != 200000 || *p != 100000 {
		t.Errorf("got %v %v %v", q, p, err)
	}
	q, p, err = parseCPUMax("max 100000")
	if err != nil || q != nil || *p != 100000 {
		t.Errorf("max: got %v %v %v", q, p, err)
	}
	for _, bad := range []string{"max", "x 100000", "100 y"} {
		if _, _, err := parseCPUMax(bad); err == nil {
			t.Errorf("parseCPUMax(%q): no error", bad)
		}
	}
	kv, err := parseKeyValues([]byte("nr_periods 10\nnr_throttled 2\nthrottled_usec 300\n"))
	if err != nil || *kv["nr_throttled"] != 2 {
		t.Errorf("parseKeyValues: %v %v", kv, err)
	}
}

func TestParseEnvFileAndBanIRQ(t *testing.T) {
	env := parseEnvFile([]byte("# comment\nENABLED=\"1\"\nexport IRQBALANCE_BANNED_CPULIST=0-3,8\nIRQBALANCE_ARGS='--banirq=45 --banirq 46 -i 47 --foreground' \nOPTIONS=x # trailing\nbroken line\n"))
	want := map[string]string{"ENABLED": "1", "IRQBALANCE_BANNED_CPULIST": "0-3,8", "IRQBALANCE_ARGS": "--banirq=45 --banirq 46 -i 47 --foreground", "OPTIONS": "x"}
	if diff := cmp.Diff(want, env); diff != "" {
		t.Errorf("parseEnvFile (-want +got):\n%s", diff)
	}
	if got := parseBanIRQ(env["IRQBALANCE_ARGS"]); !slices.Equal(got, []int{45, 46, 47}) {
		t.Errorf("parseBanIRQ = %v", got)
	}
}

func TestParseStat(t *testing.T) {
	in := "cpu  120736 346 44342 319793 2205 0 4755 274 0 0\ncpu0 59775 149 21023 162591 364 0 2094 134 0 0\ncpu3 1 2 3 4 5 6 7 8\nintr 6974526 0 0\nctxt 123\n"
	_, got, err := ParseCPUTimes([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []CPUTime{
		{CPU: 0, User: 59775, Nice: 149, System: 21023, Idle: 162591, IOWait: 364, SoftIRQ: 2094, Steal: 134},
		{CPU: 3, User: 1, Nice: 2, System: 3, Idle: 4, IOWait: 5, IRQ: 6, SoftIRQ: 7, Steal: 8},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseStat (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"cpu0 1 2 3\n", "cpux 1 2 3 4 5 6 7 8\n", "cpu1 1 2 3 4 5 6 7 z\n"} {
		if _, _, err := ParseCPUTimes([]byte(bad)); err == nil {
			t.Errorf("ParseCPUTimes(%q): no error", bad)
		}
	}
}

func TestParseCPUWordsAndInts(t *testing.T) {
	set, err := parseCPUWords("0 1 2 70\n")
	if err != nil || set.String() != "0-2,70" {
		t.Errorf("parseCPUWords = %q, %v", set.String(), err)
	}
	if _, err := parseCPUWords("0 x"); err == nil {
		t.Error("parseCPUWords accepted x")
	}
	d, err := parseInts("10 21 31")
	if err != nil || !slices.Equal(d, []int{10, 21, 31}) {
		t.Errorf("parseInts = %v, %v", d, err)
	}
	if _, err := parseInts("10 x"); err == nil {
		t.Error("parseInts accepted x")
	}
}
