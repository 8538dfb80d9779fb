package tune

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"redline/internal/change"
	"redline/internal/host"
	"redline/internal/placement"
)

func iptr(i int) *int { return &i }

func cset(list string) *host.CPUSet {
	s, err := host.ParseCPUList(list)
	if err != nil {
		panic(err)
	}
	return &s
}

// twoSocket models a 2-socket machine, 8 cores x 2 threads per socket:
// node 0 has CPUs 0-7,16-23, node 1 8-15,24-31 (CPU n and n+16 are SMT
// siblings). Its mlx5 NIC sits on node 1 with queues IRQs 100.. and Redis
// (pid 4242) is unpinned, its main thread last on CPU 9 and two io threads
// on 10 and 11. irqbalance runs.
func twoSocket(queues int) *host.Snapshot {
	s := &host.Snapshot{Hostname: "db1", Sysctls: host.Sysctls{}}
	s.CPU.Online = cset("0-31")
	for id := 0; id < 32; id++ {
		core, node := id%16, (id%16)/8
		s.CPU.CPUs = append(s.CPU.CPUs, host.CPU{ID: id, Online: true, Package: iptr(node), Core: iptr(core),
			Siblings: cset(fmt.Sprintf("%d,%d", core, core+16)), Node: iptr(node)})
	}
	s.NUMA.Nodes = []host.Node{{ID: 0, CPUs: *cset("0-7,16-23")}, {ID: 1, CPUs: *cset("8-15,24-31")}}
	nic := host.NIC{Name: "ens1f0", Driver: "mlx5_core", OperState: "up", NUMANode: iptr(1), LocalCPUs: cset("8-15,24-31")}
	for q := 0; q < queues; q++ {
		nic.QueueIRQs = append(nic.QueueIRQs, host.QueueIRQ{IRQ: 100 + q, Name: fmt.Sprintf("mlx5_comp%d@pci:0000:3b:00.0", q), Queue: q, Kind: host.QueueCombined, Rule: "mlx5"})
		nic.RxQueues = append(nic.RxQueues, host.RxQueue{Index: q, RPSCPUs: cset(""), RPSFlowCnt: iptr(0)})
		nic.TxQueues = append(nic.TxQueues, host.TxQueue{Index: q, XPSCPUs: cset("")})
	}
	s.NICs = []host.NIC{nic, {Name: "lo", Virtual: true, OperState: "unknown"}}
	s.Processes = []host.Process{{PID: 4242, Comm: "redis-server", CPUsAllowed: cset("0-31"), NetNSIsInspector: true,
		NUMABytes: map[int]uint64{0: 3 << 30, 1: 1 << 30},
		Listen:    []host.ListenSocket{{Family: "tcp", Addr: "0.0.0.0", Port: 6379}},
		Threads: []host.Thread{
			{TID: 4242, Comm: "redis-server", Role: "main", CPU: iptr(9)},
			{TID: 4243, Comm: "bio_close_file", Role: "bio", CPU: iptr(3)},
			{TID: 4244, Comm: "io_thd_1", Role: "io", CPU: iptr(10)},
			{TID: 4245, Comm: "io_thd_2", Role: "io", CPU: iptr(11)},
		}}}
	s.Irqbalance = host.Irqbalance{Running: true, PIDs: []int{800}, ConfigPath: "/etc/default/irqbalance"}
	s.Sysctls = host.Sysctls{
		"net.core.somaxconn": "4096", "net.ipv4.tcp_max_syn_backlog": "512", "net.core.netdev_max_backlog": "1000",
		"net.core.netdev_budget": "300", "net.ipv4.ip_local_port_range": "32768 60999", "net.ipv4.ip_local_reserved_ports": "",
		"net.ipv4.tcp_max_tw_buckets": "262144", "net.core.rps_sock_flow_entries": "0",
		"vm.overcommit_memory": "0", "kernel.numa_balancing": "1", "vm.zone_reclaim_mode": "0",
	}
	s.THP = &host.THP{Enabled: "always", Defrag: "madvise"}
	return s
}

// irqPlacement maps IRQ -> CPU from a plan.
func irqPlacement(t *testing.T, p *Plan) map[int]int {
	t.Helper()
	out := map[int]int{}
	for _, c := range p.Changes {
		var irq int
		if _, err := fmt.Sscanf(c.Target, "/proc/irq/%d/smp_affinity_list", &irq); err != nil {
			continue
		}
		cpu, err := strconv.Atoi(c.Value)
		if err != nil {
			t.Fatalf("IRQ %d gets %q, not one CPU", irq, c.Value)
		}
		out[irq] = cpu
	}
	return out
}

// pinThreads confines each Redis main and io thread of snap to the CPU it
// runs on (server_cpulist, io-threads-cpulist or taskset per thread).
func pinThreads(snap *host.Snapshot) *host.Snapshot {
	for i := range snap.Processes[0].Threads {
		if t := &snap.Processes[0].Threads[i]; t.Role == "main" || t.Role == "io" {
			t.CPUsAllowed = cset(fmt.Sprint(*t.CPU))
		}
	}
	return snap
}

func TestIRQLocalPlacement(t *testing.T) {
	snap := pinThreads(twoSocket(8))
	p, err := PlanProfiles(PlanInput{Host: snap}, "irq-local")
	if err != nil {
		t.Fatal(err)
	}
	if p.Changes[0].Kind != change.KindService || p.Changes[0].Value != "inactive" {
		t.Fatalf("irqbalance is not stopped before the IRQ writes: %v", p.Changes[0])
	}
	got := irqPlacement(t, p)
	if len(got) != 8 {
		t.Fatalf("placed %d IRQs, want 8: %v", len(got), got)
	}
	busy := map[int]bool{9: true, 10: true, 11: true}
	for irq, cpu := range got {
		if !snap.NUMA.Nodes[1].CPUs.Contains(cpu) {
			t.Errorf("IRQ %d on CPU %d, off the NIC's node 1", irq, cpu)
		}
		if busy[cpu] {
			t.Errorf("IRQ %d on CPU %d, where a Redis main or io thread runs", irq, cpu)
		}
	}
	// Node 1 has 8 cores; 3 run Redis, so 5 cores are free: the first 5
	// queues take 5 different cores, never two on one while one is free
	// (oeAware's modulo bug).
	cores := map[int]bool{}
	for q := 0; q < 5; q++ {
		core := got[100+q] % 16
		if cores[core] || busy[core] {
			t.Errorf("queue %d on core %d: taken already or Redis's, while free cores remain", q, core)
		}
		cores[core] = true
	}
	want := map[int]int{100: 8, 101: 12, 102: 13, 103: 14, 104: 15, 105: 24, 106: 28, 107: 29}
	for irq, cpu := range want {
		if got[irq] != cpu {
			t.Errorf("IRQ %d on CPU %d, want %d (cores first, Redis's siblings last): %v", irq, got[irq], cpu, got)
		}
	}
	if !hasNote(p, "ethtool -L") {
		t.Errorf("notes lack the too-many-queues advice: %q", p.Notes)
	}
}

// An unpinned Redis's threads may run on any CPU: where they last ran
// changes from one look to the next, so placement (and the fix doctor
// proposes) does not depend on it, and says so.
func TestIRQLocalUnpinnedRedis(t *testing.T) {
	snap := twoSocket(4)
	p, err := PlanProfiles(PlanInput{Host: snap}, "irq-local")
	if err != nil {
		t.Fatal(err)
	}
	snap.Processes[0].Threads[0].CPU = iptr(8) // ran elsewhere at the next look
	p2, err := PlanProfiles(PlanInput{Host: snap}, "irq-local")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := irqPlacement(t, p), irqPlacement(t, p2); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("placement follows where the threads last ran: %v then %v", a, b)
	}
	if !hasNote(p, "not pinned") {
		t.Errorf("no note that Redis is not pinned: %q", p.Notes)
	}
}

// With fewer queues than free cores every queue gets a whole core.
func TestIRQLocalOneCorePerQueue(t *testing.T) {
	p, err := PlanProfiles(PlanInput{Host: twoSocket(4)}, "irq-local")
	if err != nil {
		t.Fatal(err)
	}
	cores := map[int]bool{}
	for _, cpu := range irqPlacement(t, p) {
		if cores[cpu%16] {
			t.Fatalf("two queues on core %d while free cores remain: %v", cpu%16, irqPlacement(t, p))
		}
		cores[cpu%16] = true
	}
}

func TestIRQLocalWithNUMABind(t *testing.T) {
	snap := twoSocket(8)
	p, err := PlanProfiles(PlanInput{Host: snap}, "numa-bind", "irq-local")
	if err != nil {
		t.Fatal(err)
	}
	irqs := host.CPUSet{}
	for _, cpu := range irqPlacement(t, p) {
		irqs.Add(cpu)
	}
	var bind *change.Change
	for i := range p.Changes {
		if p.Changes[i].Kind == change.KindAffinity {
			bind = &p.Changes[i]
		}
	}
	if bind == nil || bind.Target != "4242" {
		t.Fatalf("no affinity change for Redis: %v", p.Changes)
	}
	redis, _ := host.ParseCPUList(bind.Value)
	if !redis.IsSubsetOf(snap.NUMA.Nodes[1].CPUs) || !redis.Intersect(irqs).IsEmpty() {
		t.Fatalf("Redis bound to %s, IRQs on %s: want node 1 and disjoint", redis.List(), irqs.List())
	}
	// Three whole cores (13-15 with siblings 29-31) stay free of IRQs for
	// the main and two io threads.
	for _, cpu := range []int{13, 14, 15, 29, 30, 31} {
		if irqs.Contains(cpu) {
			t.Errorf("IRQ on CPU %d, which was kept for Redis", cpu)
		}
	}
	if p.Changes[len(p.Changes)-1].Kind != change.KindAffinity {
		t.Error("numa-bind should come after irq-local in the plan")
	}
	if !hasNote(p, "numactl --cpunodebind=1 --membind=1") {
		t.Errorf("no note that Redis's memory stays on node 0: %q", p.Notes)
	}
}

func TestIRQLocalNodeUnknown(t *testing.T) {
	snap := twoSocket(4)
	snap.NICs[0].NUMANode = iptr(-1)
	snap.NICs[0].LocalCPUs = nil
	_, err := PlanProfiles(PlanInput{Host: snap}, "irq-local")
	if err == nil || !strings.Contains(err.Error(), "--nic-node") {
		t.Fatalf("node -1 on a 2-node machine: %v", err)
	}
	p, err := PlanProfiles(PlanInput{Host: snap, NICNode: iptr(0)}, "irq-local")
	if err != nil {
		t.Fatal(err)
	}
	for irq, cpu := range irqPlacement(t, p) {
		if !snap.NUMA.Nodes[0].CPUs.Contains(cpu) {
			t.Errorf("IRQ %d on CPU %d with --nic-node 0", irq, cpu)
		}
	}
	// One node: -1 means every CPU is local, and the plan says so.
	one := twoSocket(2)
	one.NUMA.Nodes = []host.Node{{ID: 0, CPUs: *cset("0-31")}}
	one.NICs[0].NUMANode = iptr(-1)
	one.NICs[0].LocalCPUs = nil
	p, err = PlanProfiles(PlanInput{Host: one}, "irq-local")
	if err != nil || !hasNote(p, "NUMA node -1") {
		t.Fatalf("node -1 on a one-node machine: %v %q", err, p.Notes)
	}
}

func TestIRQLocalRefusesRedisCPUs(t *testing.T) {
	snap := pinThreads(twoSocket(2))
	snap.NICs[0].LocalCPUs = cset("9")
	snap.NUMA.Nodes[1].CPUs = *cset("9")
	_, err := PlanProfiles(PlanInput{Host: snap}, "irq-local")
	if err == nil || !strings.Contains(err.Error(), "Redis's main or io threads") {
		t.Fatalf("IRQs on the only local CPU, Redis's: %v", err)
	}
}

func TestKeepIrqbalance(t *testing.T) {
	p, err := PlanProfiles(PlanInput{Host: twoSocket(2), KeepIrqbalance: true}, "irq-local")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Changes {
		if c.Kind == change.KindService {
			t.Fatalf("irqbalance stopped despite KeepIrqbalance")
		}
	}
	if !hasNote(p, "--banirq") {
		t.Errorf("no irqbalance warning: %q", p.Notes)
	}
}

func TestNetSysctlNeverLowers(t *testing.T) {
	snap := twoSocket(2)
	snap.Processes[0].Cmdline = []string{"redis-server *:6379 [cluster]"} // its bus port 16379 is reserved
	snap.Sysctls["net.core.somaxconn"] = "100000"
	snap.Net.TcpExt = map[string]uint64{"TCPTimeWaitOverflow": 12}
	p, err := PlanProfiles(PlanInput{Host: snap}, "net-sysctl")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range p.Changes {
		got[c.Target] = c.Value
	}
	want := map[string]string{
		"net.ipv4.tcp_max_syn_backlog": "65536", "net.core.netdev_max_backlog": "10000", "net.core.netdev_budget": "600",
		"net.ipv4.ip_local_port_range": "10000 65535", "net.ipv4.ip_local_reserved_ports": "16379",
		"net.ipv4.tcp_max_tw_buckets": "524288",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["net.core.somaxconn"]; ok {
		t.Error("somaxconn 100000 was lowered")
	}
	if _, ok := got["net.ipv4.tcp_rmem"]; ok {
		t.Error("tcp_rmem must not be planned")
	}
	if !hasNote(p, "87380") {
		t.Errorf("no tcp_rmem caveat: %q", p.Notes)
	}
	snap.Net.TcpExt = nil
	p, _ = PlanProfiles(PlanInput{Host: snap}, "net-sysctl")
	for _, c := range p.Changes {
		if c.Target == "net.ipv4.tcp_max_tw_buckets" {
			t.Error("tcp_max_tw_buckets changed without overflows")
		}
	}
}

func TestNetSysctlOtherNetns(t *testing.T) {
	snap := twoSocket(2)
	snap.Processes[0].NetNSIsInspector = false
	p, err := PlanProfiles(PlanInput{Host: snap}, "net-sysctl")
	if err != nil || len(p.Changes) != 0 || !hasNote(p, "another network namespace") {
		t.Fatalf("Redis in another netns: %v %v %q", err, p.Changes, p.Notes)
	}
}

func TestRPSXPS(t *testing.T) {
	p, err := PlanProfiles(PlanInput{Host: pinThreads(twoSocket(2))}, "rps-xps")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range p.Changes {
		got[c.Target] = c.Value
	}
	// 2 RX queues for 16 local CPUs: RPS over node 1 without Redis's
	// main/io CPUs 9-11.
	rps, _ := host.ParseCPUMask(got["/sys/class/net/ens1f0/queues/rx-0/rps_cpus"])
	if rps.List() != "8,12-15,24-31" {
		t.Errorf("rps_cpus = %s", rps.List())
	}
	if got["net.core.rps_sock_flow_entries"] != "32768" || got["/sys/class/net/ens1f0/queues/rx-1/rps_flow_cnt"] != "16384" {
		t.Errorf("RFS not set: %v", got)
	}
	x0, _ := host.ParseCPUMask(got["/sys/class/net/ens1f0/queues/tx-0/xps_cpus"])
	x1, _ := host.ParseCPUMask(got["/sys/class/net/ens1f0/queues/tx-1/xps_cpus"])
	// placement.XPS: node 1's CPUs, each on exactly one queue, following
	// irq-local's placement (queue 0 on CPU 8, queue 1 on CPU 12, off
	// Redis's 9-11): each IRQ CPU and its sibling (24, 28) send on their
	// queue, the other CPUs are dealt over both in turn.
	if x0.List() != "8-9,11,14,24-25,27,30" || x1.List() != "10,12-13,15,26,28-29,31" {
		t.Errorf("xps maps %s and %s: each CPU local to the NIC should map to exactly one queue, CPU 8 to tx-0, CPU 12 to tx-1", x0.List(), x1.List())
	}
	// As many RX queues as local CPUs: RPS is redundant and cleared.
	snap := twoSocket(16)
	snap.NICs[0].RxQueues[3].RPSCPUs = cset("8-9")
	p, _ = PlanProfiles(PlanInput{Host: snap}, "rps-xps")
	n := 0
	for _, c := range p.Changes {
		if strings.HasSuffix(c.Target, "rps_cpus") {
			n++
			if c.Target != "/sys/class/net/ens1f0/queues/rx-3/rps_cpus" || c.Value != "0" {
				t.Errorf("redundant RPS: %v", c)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d rps changes with one queue per CPU, want 1 (clearing rx-3)", n)
	}
}

func TestMemoryAndRedisConfigProfiles(t *testing.T) {
	snap := twoSocket(2)
	if _, err := PlanProfiles(PlanInput{Host: snap}, "redis-config"); err == nil || !strings.Contains(err.Error(), "--redis") {
		t.Errorf("redis-config without an address: %v", err)
	}
	p, err := PlanProfiles(PlanInput{Host: snap, Redis: &PlanRedis{Addr: "127.0.0.1:6379"}}, "memory", "redis-config")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range p.Changes {
		got[c.Target] = c.Value
	}
	for k, v := range map[string]string{"vm.overcommit_memory": "1", "/sys/kernel/mm/transparent_hugepage/enabled": "madvise",
		"kernel.numa_balancing": "0", "lazyfree-lazy-eviction": "yes", "latency-monitor-threshold": "100"} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["/sys/kernel/mm/transparent_hugepage/defrag"]; ok {
		t.Error("defrag is madvise already")
	}
	if !hasNote(p, "io-threads") {
		t.Errorf("no io-threads advice: %q", p.Notes)
	}
}

func TestPlanProfileErrors(t *testing.T) {
	snap := twoSocket(2)
	if _, err := PlanProfiles(PlanInput{Host: snap}, "irq-lokal"); err == nil || !strings.Contains(err.Error(), "irq-local") {
		t.Errorf("unknown profile: %v", err)
	}
	if _, err := PlanProfiles(PlanInput{Host: snap, NIC: "eth9"}, "irq-local"); err == nil || !strings.Contains(err.Error(), "eth9") {
		t.Errorf("unknown NIC: %v", err)
	}
	snap.NICs = append(snap.NICs, host.NIC{Name: "ens2", OperState: "up"})
	if _, err := PlanProfiles(PlanInput{Host: snap}, "irq-local"); err == nil || !strings.Contains(err.Error(), "--nic") {
		t.Errorf("two NICs up: %v", err)
	}
	snap.Processes = append(snap.Processes, host.Process{PID: 5000})
	if _, err := PlanProfiles(PlanInput{Host: snap, NIC: "ens1f0"}, "numa-bind"); err == nil || !strings.Contains(err.Error(), "--pid") {
		t.Errorf("two Redis processes: %v", err)
	}
}

func hasNote(p *Plan, s string) bool {
	for _, n := range p.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// The reserved-port list is planned as the kernel reads it back (sorted,
// ranges merged), whatever order the existing list and Redis's ports are
// in: an unsorted value failed its read-back when two servers listened.
func TestNetSysctlReservedPortsInKernelForm(t *testing.T) {
	snap := twoSocket(2)
	snap.Processes[0].Cmdline = []string{"redis-server *:6379 [cluster]"}
	snap.Sysctls["net.ipv4.ip_local_reserved_ports"] = "30000,20001-20002"
	p, err := PlanProfiles(PlanInput{Host: snap}, "net-sysctl")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Changes {
		if c.Target == "net.ipv4.ip_local_reserved_ports" {
			if c.Value != "16379,20001-20002,30000" {
				t.Errorf("planned %q, want the kernel's sorted form", c.Value)
			}
			return
		}
	}
	t.Fatalf("no reserved-ports change in %v", p.Changes)
}

// manyServers is a host of several redis-servers (issue 41): 7601 and
// 7602 here, 6379 in two other network namespaces (one named), 20000 a
// cluster node here.
func manyServers() *host.Snapshot {
	snap := twoSocket(2)
	base := snap.Processes[0]
	srv := func(pid, port int, ns uint64, name string, cmd string) host.Process {
		p := base
		p.PID, p.Cmdline = pid, []string{cmd}
		p.NetNS, p.NetNSIsInspector, p.NetNSName = 1, true, ""
		if ns != 1 {
			p.NetNS, p.NetNSIsInspector, p.NetNSName = ns, false, name
		}
		p.Listen = []host.ListenSocket{{Family: "tcp", Addr: "0.0.0.0", Port: port}, {Family: "tcp6", Addr: "::", Port: port}}
		return p
	}
	snap.Processes = []host.Process{
		srv(101, 7601, 1, "", "redis-server *:7601"),
		srv(102, 7602, 1, "", "redis-server *:7602"),
		srv(103, 6379, 2, "blue", "redis-server *:6379"),
		srv(104, 6379, 3, "", "redis-server *:6379"),
		srv(105, 20000, 1, "", "redis-server *:20000 [cluster]"),
	}
	return snap
}

// --redis picks the server it reaches from here; an address where nothing
// listens is answered, and a --pid of another server refused.
func TestPickRedisByAddress(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		pid     int
		want    int
		wantErr string
	}{
		{addr: "127.0.0.1:7602", want: 102},
		{addr: "localhost:7601", want: 101},
		{addr: "127.0.0.1:6379", wantErr: "no redis-server in this network namespace listens on 127.0.0.1:6379"},
		{addr: "127.0.0.1:7699", wantErr: "pid 103 at 0.0.0.0:6379 [::]:6379 in netns blue; pid 104 at 0.0.0.0:6379 [::]:6379 in netns /proc/104/ns/net"},
		{addr: "127.0.0.1:7601", pid: 102, wantErr: "pid 102 is not the server at 127.0.0.1:7601 (that is pid 101)"},
		{addr: "127.0.0.1:7601", pid: 101, want: 101},
		{addr: "/run/redis.sock", pid: 102, want: 102},
		{wantErr: "several Redis processes (redis-servers: pid 101 at"},
	} {
		in := PlanInput{Host: manyServers(), PID: tc.pid}
		if tc.addr != "" {
			in.Redis = &PlanRedis{Network: "tcp", Addr: tc.addr}
		}
		pc := &planContext{in: in, plan: &Plan{}}
		p, err := pc.pickRedis()
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s pid %d: error %v, want %q", tc.addr, tc.pid, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%s pid %d: %v", tc.addr, tc.pid, err)
		case p == nil || p.PID != tc.want:
			t.Errorf("%s pid %d: picked %v, want pid %d", tc.addr, tc.pid, p, tc.want)
		}
	}
}

// net-sysctl reserves the ports of this namespace's servers only, the bus
// port only of a cluster node, says it widens the range, and names the
// ports as a list, not a Go slice.
func TestNetSysctlReservesOnlyThisNamespacesPorts(t *testing.T) {
	snap := manyServers()
	snap.Processes[0].Listen[0].Port = 17601 // inside the range, as the bus port of 7601 would be
	p, err := PlanProfiles(PlanInput{Host: snap}, "net-sysctl")
	if err != nil {
		t.Fatal(err)
	}
	var reserved *change.Change
	for i, c := range p.Changes {
		if c.Target == "net.ipv4.ip_local_reserved_ports" {
			reserved = &p.Changes[i]
		}
	}
	if reserved == nil {
		t.Fatalf("no reserved-ports change in %v", p.Changes)
	}
	if reserved.Value != "17601,20000,30000" {
		t.Errorf("reserved %q, want 17601 (a listener), 20000 and its bus port 30000 (cluster); not 16379 nor 17602", reserved.Value)
	}
	if strings.ContainsAny(reserved.Why, "[]") || !strings.Contains(reserved.Why, "17601,20000,30000") {
		t.Errorf("why %q: want the ports as a list", reserved.Why)
	}
	if !slices.ContainsFunc(p.Notes, func(n string) bool {
		return strings.Contains(n, "ip_local_port_range widened from 32768-60999 to 10000-65535")
	}) {
		t.Errorf("no note of the widened range: %q", p.Notes)
	}
}

// TestNICCPUs: the CPUs numa-bind would give Redis, on a two-node host
// (the NIC's node) and a one-node one (every CPU, with the note that says
// so).
func TestNICCPUs(t *testing.T) {
	for _, c := range []struct {
		fixture string
		node    int
	}{{"x86-2socket-mlx5", -2}, {"local-virtio-2cpu", -1}} {
		fsys, err := host.NewFS(filepath.Join(fixtureRoot, c.fixture))
		if err != nil {
			t.Fatal(err)
		}
		snap, err := host.Read(fsys, host.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cpus, node, notes, err := NICCPUs(PlanInput{Host: snap})
		if err != nil {
			t.Fatalf("%s: %v", c.fixture, err)
		}
		switch {
		case c.node == -1 && (node != -1 || !cpus.Equal(placement.OnlineCPUs(snap)) || len(notes) == 0):
			t.Errorf("%s: one node: got node %d CPUs %s notes %v, want every CPU and a note", c.fixture, node, cpus.List(), notes)
		case c.node == -2 && (node < 0 || !cpus.Equal(snap.NodeCPUs(node).Intersect(placement.OnlineCPUs(snap)))):
			t.Errorf("%s: got node %d CPUs %s, want the NIC's node's", c.fixture, node, cpus.List())
		}
	}
}
