package doctor

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"redline/internal/host"
	"redline/internal/redisadmin"
)

// Facts is everything the rules read: the host snapshot, the server's
// facts, and optionally an earlier sample of both so that counters can be
// judged as rising rather than as totals since boot.
type Facts struct {
	Host *host.Snapshot
	// Prev is an earlier snapshot of the same host, Interval before Host.
	Prev     *host.Snapshot
	Interval time.Duration

	// Redis is nil when no server was checked; RedisNote says why ("no
	// server address given", the connection error).
	Redis     *redisadmin.Facts
	PrevRedis *redisadmin.Facts
	RedisNote string

	// Pid selects the redis-server in the snapshot when no server was
	// checked (--pid on a fixture tree). Zero with several servers: Run
	// judges the process rules once for each (Facts.PIDs).
	Pid int
	// eachServer is set when Run chose Pid to judge each server in turn:
	// host-wide decisions (IRQ placement) still keep every server in view.
	eachServer bool
	// parseErrs collects the values a rule's check could not parse (a
	// sysctl or CONFIG value that is not a number): the rule is then an
	// error. A pointer, so that the copies Servers hands a CombinesNodes
	// rule record into the collector of the Facts Run judges.
	parseErrs *parseErrors

	// Iface is the NIC that carries Redis traffic; empty means every
	// physical NIC that is up.
	Iface string
	// ExpectedClients is the peak number of simultaneous clients the
	// operator expects (the write-up's 5000); 0 means unknown.
	ExpectedClients int
	// IntrinsicLatency is a measured intrinsic latency (redis-cli
	// --intrinsic-latency) of this host, when one was taken.
	IntrinsicLatency *time.Duration

	// Cluster is set when the server is a Redis Cluster node: Run then
	// judges every node (Cluster.Nodes) and the cluster as a whole.
	Cluster *Cluster
	// Node is the cluster node a per-node rule judges (nil otherwise).
	Node *Node
	// nodes are the local cluster nodes a CombinesNodes rule judges
	// together (Servers).
	nodes []*ClusterNodeFacts
}

// Servers returns the facts of each server a CombinesNodes rule judges:
// one per local cluster node of the namespace (Redis set to that node's),
// or f alone outside a cluster.
func (f *Facts) Servers() []*Facts {
	if len(f.nodes) == 0 {
		return []*Facts{f}
	}
	if f.parseErrs == nil { // a check called outside Run: the copies share one all the same
		f.parseErrs = &parseErrors{}
	}
	out := make([]*Facts, len(f.nodes))
	for i, n := range f.nodes {
		g := *f
		g.Redis, g.PrevRedis, g.Node, g.nodes = n.Redis, n.PrevRedis, &n.Node, nil
		out[i] = &g
	}
	return out
}

// HasRedis reports whether a server's INFO was read.
func (f *Facts) HasRedis() bool { return f.Redis != nil && f.Redis.Info != nil }

// Info returns the server's INFO (nil-safe accessors).
func (f *Facts) Info() *redisadmin.Info {
	if f.Redis == nil {
		return nil
	}
	return f.Redis.Info
}

// RedisProcess returns the server's process in the host snapshot: the one
// with the server's pid when a local server was checked, else the one Pid
// selects, else (a fixture tree, or no server address) the first Redis
// process the snapshot holds. Nil when there is none, or the server is on
// another host. The first-server fallback judges one server for all:
// rules about a server's process (NeedRedisProcess, PerServer) and its
// namespace (PerNetNS) run once per server or namespace instead (Run sets
// Pid), and Sysctl reads host-wide values from the host; a rule outside
// both must not depend on which server comes first.
func (f *Facts) RedisProcess() *host.Process {
	if f.Host == nil || len(f.Host.Processes) == 0 {
		return nil
	}
	pid := f.Pid
	if f.HasRedis() {
		if !f.Redis.Process.Local {
			return nil
		}
		pid = f.Redis.Process.Pid
	}
	if pid == 0 {
		return &f.Host.Processes[0]
	}
	for i := range f.Host.Processes {
		if f.Host.Processes[i].PID == pid {
			return &f.Host.Processes[i]
		}
	}
	return nil
}

// RedisProcesses returns the redis-servers a host-wide decision keeps in
// view (IRQ placement keeps off every one's CPUs): the server checked, or
// the one --pid chose, else every redis-server in the snapshot, also while
// Run judges them one at a time. Nil when none is on this host.
func (f *Facts) RedisProcesses() []*host.Process {
	if f.Host == nil {
		return nil
	}
	if f.Pid != 0 && !f.eachServer || f.HasRedis() && f.Redis.Process.Local {
		if p := f.RedisProcess(); p != nil {
			return []*host.Process{p}
		}
		return nil
	}
	out := make([]*host.Process, len(f.Host.Processes))
	for i := range f.Host.Processes {
		out[i] = &f.Host.Processes[i]
	}
	return out
}

// PIDs returns the redis-servers that process rules judge one by one:
// every one in the snapshot when there are several and none was chosen
// (no server checked, no --pid), else nil.
func (f *Facts) PIDs() []int {
	if f.Host == nil || f.HasRedis() || f.Pid != 0 || len(f.Host.Processes) < 2 {
		return nil
	}
	out := make([]int, len(f.Host.Processes))
	for i, p := range f.Host.Processes {
		out[i] = p.PID
	}
	return out
}

// sysctlPath maps "net.core.somaxconn" to its /proc/sys path.
func sysctlPath(name string) string {
	return "/proc/sys/" + strings.ReplaceAll(name, ".", "/")
}

// globalNetSysctls are the net.* sysctls the kernel registers for the
// initial network namespace only (register_net_sysctl(&init_net, ...)): one
// value for the whole host, absent inside any other namespace. Read there
// they would look missing ("this kernel has no busy polling"); they are
// read from the host. The lists are the kernel's tables, not memory:
// net/core/sysctl_net_core.c net_core_table (Linux 6.6; the per-namespace
// ones are netns_core_table: somaxconn, txrehash, rps_default_mask) and
// net/ipv4/sysctl_net_ipv4.c ipv4_table (a 2025 6.x tree; every
// net.ipv4 sysctl doctor reads is in ipv4_net_table, per namespace). Versions differ:
// optmem_max moved to netns_core_table in 6.8 ("net: Namespace-ify
// sysctl_optmem_max"), and since 6.11 (19249c0724f2) {r,w}mem_{default,max}
// also appear read-only in every namespace, showing the host's value. So a
// namespace that has one of these gives its own value (Sysctl), and one
// that lacks it the host's.
var globalNetSysctls = setOf(
	// net_core_table
	"net.core.wmem_max", "net.core.rmem_max", "net.core.wmem_default", "net.core.rmem_default",
	"net.core.dev_weight", "net.core.dev_weight_rx_bias", "net.core.dev_weight_tx_bias",
	"net.core.netdev_max_backlog", "net.core.netdev_rss_key",
	"net.core.bpf_jit_enable", "net.core.bpf_jit_harden", "net.core.bpf_jit_kallsyms", "net.core.bpf_jit_limit",
	"net.core.netdev_tstamp_prequeue", "net.core.message_cost", "net.core.message_burst",
	"net.core.optmem_max", // before 6.8
	"net.core.tstamp_allow_data", "net.core.rps_sock_flow_entries",
	"net.core.flow_limit_cpu_bitmap", "net.core.flow_limit_table_len",
	"net.core.busy_poll", "net.core.busy_read", "net.core.default_qdisc",
	"net.core.netdev_budget", "net.core.warnings", "net.core.max_skb_frags", "net.core.netdev_budget_usecs",
	"net.core.fb_tunnels_only_for_init_net", "net.core.devconf_inherit_init_net",
	"net.core.high_order_alloc_disable", "net.core.gro_normal_batch",
	"net.core.netdev_unregister_timeout_secs", "net.core.skb_defer_max",
	// ipv4_table
	"net.ipv4.tcp_max_orphans", "net.ipv4.inet_peer_threshold", "net.ipv4.inet_peer_minttl", "net.ipv4.inet_peer_maxttl",
	"net.ipv4.tcp_mem", "net.ipv4.tcp_low_latency",
	"net.ipv4.cipso_cache_enable", "net.ipv4.cipso_cache_bucket_size", "net.ipv4.cipso_rbm_optfmt", "net.ipv4.cipso_rbm_strictvalid",
	"net.ipv4.tcp_available_ulp", "net.ipv4.udp_mem", "net.ipv4.fib_sync_mem",
)

func setOf(names ...string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[n] = true
	}
	return out
}

// Sysctl returns a sysctl's value and the evidence for it. net.* values
// come from the server's network namespace when it differs from the
// inspector's: that is the namespace whose values govern the server's
// sockets. A host-wide one (globalNetSysctls) the namespace lacks comes
// from the host, whichever server is judged: with several servers and
// none chosen, a rule that is not PerNetNS would otherwise read the first
// server's namespace, where it does not exist.
func (f *Facts) Sysctl(name string) (string, Evidence, bool) {
	ev := Evidence{Source: sysctlPath(name), Absent: true}
	if f.Host == nil {
		return "", ev, false
	}
	if p := f.RedisProcess(); p != nil && strings.HasPrefix(name, "net.") && !p.NetNSIsInspector && p.NetSysctls != nil {
		v, ok := p.NetSysctls[name]
		if ok || !globalNetSysctls[name] {
			ev.Value, ev.Absent, ev.Note = v, !ok, fmt.Sprintf("in the network namespace of redis-server pid %d", p.PID)
			return v, ev, ok
		}
	}
	v, ok := f.Host.Sysctls[name]
	ev.Value, ev.Absent = v, !ok
	return v, ev, ok
}

// parseErrors are the values one run of a check could not parse.
type parseErrors struct{ errs []*host.ParseError }

// parsed records a value that did not parse as a *host.ParseError of its
// source; Run reports the rule as an error.
func (f *Facts) parsed(ev Evidence, err error) bool {
	if err == nil {
		return true
	}
	if f.parseErrs == nil { // a check called outside Run
		f.parseErrs = &parseErrors{}
	}
	f.parseErrs.errs = append(f.parseErrs.errs, &host.ParseError{Path: ev.Source, Line: 1, Err: fmt.Errorf("%q: %w", ev.Value, err)})
	return false
}

// parseError returns the first value a check could not parse.
func (f *Facts) parseError() error {
	if f.parseErrs == nil || len(f.parseErrs.errs) == 0 {
		return nil
	}
	return f.parseErrs.errs[0]
}

// SysctlInt returns a numeric sysctl. A value that is not a number is
// not ok, and makes the rule an error.
func (f *Facts) SysctlInt(name string) (int64, Evidence, bool) {
	v, ev, ok := f.Sysctl(name)
	if !ok {
		return 0, ev, false
	}
	n, err := parseInt(v)
	return n, ev, f.parsed(ev, err)
}

// SysctlInts returns a sysctl holding several numbers ("32768 60999").
func (f *Facts) SysctlInts(name string) ([]int64, Evidence, bool) {
	v, ev, ok := f.Sysctl(name)
	if !ok {
		return nil, ev, false
	}
	var out []int64
	for _, s := range strings.Fields(v) {
		n, err := parseInt(s)
		if !f.parsed(ev, err) {
			return nil, ev, false
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, ev, f.parsed(ev, errors.New("no number"))
	}
	return out, ev, true
}

// NetStats returns the counters of the server's network namespace (the
// host's when it shares the inspector's), and of the earlier sample.
func (f *Facts) NetStats() (cur, prev *host.NetStats) {
	pick := func(s *host.Snapshot) *host.NetStats {
		if s == nil {
			return nil
		}
		if p := f.RedisProcess(); p != nil && !p.NetNSIsInspector && p.Net != nil {
			for i := range s.Processes {
				if s.Processes[i].PID == p.PID && s.Processes[i].Net != nil {
					return s.Processes[i].Net
				}
			}
		}
		return &s.Net
	}
	return pick(f.Host), pick(f.Prev)
}

// Config returns a CONFIG GET value and its evidence.
func (f *Facts) Config(name string) (string, Evidence, bool) {
	ev := Evidence{Source: "CONFIG GET " + name, Absent: true}
	if f.Redis == nil || f.Redis.Config == nil {
		return "", ev, false
	}
	v, ok := f.Redis.Config.Get(name)
	ev.Value, ev.Absent = v, !ok
	return v, ev, ok
}

// ConfigInt returns a numeric CONFIG GET value.
func (f *Facts) ConfigInt(name string) (int64, Evidence, bool) {
	v, ev, ok := f.Config(name)
	if !ok {
		return 0, ev, false
	}
	n, err := parseInt(v)
	return n, ev, f.parsed(ev, err)
}

// InfoInt returns a numeric INFO field and its evidence.
func (f *Facts) InfoInt(key string) (int64, Evidence, bool) {
	ev := Evidence{Source: "INFO " + key, Absent: true}
	info := f.Info()
	if info == nil {
		return 0, ev, false
	}
	v, ok := info.Get(key)
	if !ok {
		return 0, ev, false
	}
	ev.Value, ev.Absent = v, false
	n, err := parseInt(v)
	return n, ev, f.parsed(ev, err)
}

// InfoDelta returns how much an INFO counter grew between the two server
// samples, or its total since the server started when there is one sample
// (sampled says which).
func (f *Facts) InfoDelta(key string) (delta int64, sampled bool, ev Evidence, ok bool) {
	cur, ev, ok := f.InfoInt(key)
	if !ok {
		return 0, false, ev, false
	}
	if f.PrevRedis != nil {
		if prev, ok := f.PrevRedis.Info.Int(key); ok {
			ev.Note = fmt.Sprintf("rose by %d in %s", cur-prev, f.Interval)
			return cur - prev, true, ev, true
		}
	}
	ev.Note = "total since the server started"
	return cur, false, ev, true
}

// HostDelta returns how much a host counter grew between the two samples,
// or its total since boot when there is one sample.
func (f *Facts) HostDelta(get func(*host.Snapshot) (uint64, bool)) (delta uint64, sampled, ok bool) {
	cur, ok := get(f.Host)
	if !ok {
		return 0, false, false
	}
	if f.Prev != nil {
		if prev, ok := get(f.Prev); ok && cur >= prev {
			return cur - prev, true, true
		}
	}
	return cur, false, true
}

// Since describes the window of a delta for messages.
func (f *Facts) Since(sampled bool) string {
	if sampled {
		return "in the last " + f.Interval.String()
	}
	return "since boot (one sample: run with --sample to see whether it is still rising)"
}

// Nodes returns the host's NUMA nodes.
func (f *Facts) Nodes() []host.Node {
	if f.Host == nil {
		return nil
	}
	return f.Host.NUMA.Nodes
}

// TopologyMissing says why the host's CPU and NUMA topology is unknown
// ("" when it is known). A machine whose kernel has no NUMA has no
// /sys/devices/system/node but has its CPUs: one node. A partial capture
// has neither, and "one node" would be a guess.
func (f *Facts) TopologyMissing() string {
	switch {
	case f.Host == nil:
		return "no host snapshot"
	case len(f.Host.NUMA.Nodes) == 0 && f.Host.CPU.Online == nil:
		return "the CPU and NUMA topology is absent from this tree (no /sys/devices/system/cpu/online, no /sys/devices/system/node)"
	}
	return ""
}

// MultiNode reports whether the host has more than one NUMA node.
func (f *Facts) MultiNode() bool { return len(f.Nodes()) > 1 }

// NodeOf returns the NUMA node of cpu.
func (f *Facts) NodeOf(cpu int) (int, bool) {
	for _, n := range f.Nodes() {
		if n.CPUs.Contains(cpu) {
			return n.ID, true
		}
	}
	return 0, false
}

// NodeCPUs returns the CPUs of node id.
func (f *Facts) NodeCPUs(id int) (host.CPUSet, bool) {
	for _, n := range f.Nodes() {
		if n.ID == id {
			return n.CPUs, true
		}
	}
	return host.CPUSet{}, false
}

// NodesOf returns the nodes that the CPUs of set belong to, ascending.
func (f *Facts) NodesOf(set host.CPUSet) []int {
	seen := map[int]bool{}
	for _, c := range set.CPUs() {
		if n, ok := f.NodeOf(c); ok {
			seen[n] = true
		}
	}
	out := make([]int, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// OnlineCPUs returns the host's online CPUs.
func (f *Facts) OnlineCPUs() host.CPUSet {
	if f.Host == nil || f.Host.CPU.Online == nil {
		return host.CPUSet{}
	}
	return *f.Host.CPU.Online
}

// AllowedCPUs returns the CPUs the server may run on: its affinity,
// narrowed by its cgroup's cpuset (cpuset.cpus.effective), with the
// evidence. Without a process it returns the online CPUs.
func (f *Facts) AllowedCPUs() (host.CPUSet, []Evidence) {
	set := f.OnlineCPUs()
	ev := []Evidence{Ev("/sys/devices/system/cpu/online", set.List())}
	p := f.RedisProcess()
	if p == nil {
		return set, ev
	}
	if p.CPUsAllowed != nil {
		set = set.Intersect(*p.CPUsAllowed)
		ev = append(ev, Ev(fmt.Sprintf("/proc/%d/status Cpus_allowed_list", p.PID), p.CPUsAllowed.List()))
	}
	if p.Cgroup != nil && p.Cgroup.CPUs != nil {
		set = set.Intersect(*p.Cgroup.CPUs)
		ev = append(ev, Ev("cgroup "+p.Cgroup.Path+" cpuset.cpus.effective", p.Cgroup.CPUs.List()))
	}
	return set, ev
}

// TargetNICs returns the NICs rules about Redis traffic look at: Iface if
// set, else every non-virtual NIC that is up (or whose state is unknown).
func (f *Facts) TargetNICs() []*host.NIC {
	if f.Host == nil {
		return nil
	}
	var out []*host.NIC
	for i := range f.Host.NICs {
		n := &f.Host.NICs[i]
		switch {
		case f.Iface != "":
			if n.Name == f.Iface {
				out = append(out, n)
			}
		case !n.Virtual && n.OperState != "down":
			out = append(out, n)
		}
	}
	return out
}

// MainThread returns the server's main thread.
func (f *Facts) MainThread() *host.Thread {
	p := f.RedisProcess()
	if p == nil {
		return nil
	}
	for i := range p.Threads {
		if p.Threads[i].TID == p.PID || p.Threads[i].Role == "main" {
			return &p.Threads[i]
		}
	}
	return nil
}

// IRQ returns interrupt n.
func (f *Facts) IRQ(n int) *host.IRQ {
	if f.Host == nil {
		return nil
	}
	for i := range f.Host.Interrupts.IRQs {
		if f.Host.Interrupts.IRQs[i].Number == n {
			return &f.Host.Interrupts.IRQs[i]
		}
	}
	return nil
}

// RedisAddr returns host and port for redis-cli commands.
func (f *Facts) RedisAddr() string {
	if f.Redis == nil {
		return ""
	}
	return f.Redis.Addr
}
