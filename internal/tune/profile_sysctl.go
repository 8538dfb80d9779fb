package tune

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"redline/internal/change"
	"redline/internal/cpuset"
	"redline/internal/host"
)

// raise is a sysctl the net-sysctl profile only ever raises (tuned's
// "=>" modifier): a host already above the value keeps its own.
type raise struct {
	name string
	to   int64
	why  string
}

// netRaises come from ../shared/reference/checks.md section 1 and 4.
var netRaises = []raise{
	{"net.core.somaxconn", 65535, "listen() silently caps Redis's tcp-backlog at somaxconn (applies when Redis listens again: restart it)"},
	{"net.ipv4.tcp_max_syn_backlog", 65536, "per-listener SYN queue; redis.conf says raise it with somaxconn"},
	{"net.core.netdev_max_backlog", 10000, "per-CPU backlog before the stack drops packets (scaling.rst: 10000 performed well)"},
	{"net.core.netdev_budget", 600, "packets per softirq round before time_squeeze (Kunpeng guide: 600)"},
}

// netNotes are the write-up values the profile deliberately does not copy.
var netNotes = []string{
	"tcp_rmem/tcp_wmem left alone: raise only their max field, and only for high-BDP replication links; a write-up's middle value (87380) is below the kernel's 131072 default",
	"tcp_fin_timeout left alone: it covers orphaned FIN_WAIT_2 only and does not shorten TIME_WAIT",
	"tcp_tw_reuse left at its default (ip-sysctl.rst: change only on expert advice)",
}

// buildNetSysctl raises backlogs, widens the local port range (reserving
// Redis's ports inside it) and raises tcp_max_tw_buckets only when TIME_WAIT
// sockets overflowed; it never lowers anything.
func buildNetSysctl(pc *planContext) error {
	snap := pc.in.Host
	sysctls := snap.Sysctls
	if proc, _ := pc.pickRedis(); proc != nil && !proc.NetNSIsInspector {
		pc.note("Redis (pid %d) runs in another network namespace: net.* sysctls there are its own; run redline inside it (ip netns exec / nsenter -n -t %d) to tune them", proc.PID, proc.PID)
		return nil
	}
	for _, r := range netRaises {
		pc.raise(sysctls, r)
	}
	pc.portRange(sysctls)
	pc.twBuckets(snap)
	pc.plan.Notes = append(pc.plan.Notes, netNotes...)
	return nil
}

func (pc *planContext) raise(sysctls host.Sysctls, r raise) {
	cur, ok := sysctls[r.name]
	if !ok {
		pc.note("%s is not on this kernel: skipped", r.name)
		return
	}
	n, err := strconv.ParseInt(strings.TrimSpace(cur), 10, 64)
	if err != nil || n >= r.to {
		return
	}
	pc.add("net-sysctl", change.Change{Kind: change.KindSysctl, Target: r.name, Value: strconv.FormatInt(r.to, 10), Why: r.why})
}

// Port range targets: wide enough for a benchmark's or proxy's many
// connections, starting above the well-known service ports.
const (
	portRangeLow  = 10000
	portRangeHigh = 65535
)

// portRange widens ip_local_port_range and reserves Redis's ports (and
// cluster bus ports) that fall inside it, so no outgoing connection takes
// them while Redis restarts.
func (pc *planContext) portRange(sysctls host.Sysctls) {
	f := strings.Fields(sysctls["net.ipv4.ip_local_port_range"])
	if len(f) != 2 {
		return
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || (lo <= portRangeLow && hi >= portRangeHigh) {
		return
	}
	nlo, nhi := min(lo, portRangeLow), max(hi, portRangeHigh)
	pc.add("net-sysctl", change.Change{Kind: change.KindSysctl, Target: "net.ipv4.ip_local_port_range", Value: fmt.Sprintf("%d %d", nlo, nhi),
		Why: fmt.Sprintf("more ephemeral ports for clients (was %d-%d); 'Cannot assign requested address' when they run out", lo, hi)})
	pc.note("ip_local_port_range widened from %d-%d to %d-%d: outgoing connections may now take any port in it; a server started later on a port inside it must be reserved in ip_local_reserved_ports first", lo, hi, nlo, nhi)
	pc.reservePorts(sysctls, nlo, nhi)
}

func (pc *planContext) reservePorts(sysctls host.Sysctls, lo, hi int) {
	cur, ok := sysctls["net.ipv4.ip_local_reserved_ports"]
	if !ok {
		return
	}
	// The kernel's list notation, as for CPUs; written back as it reads it
	// (sorted, ranges merged).
	reserved, err := cpuset.ParseList(strings.TrimSpace(cur))
	if err != nil {
		pc.note("ip_local_reserved_ports %q not understood: Redis's ports not reserved (%v)", cur, err)
		return
	}
	var add []string
	for _, p := range pc.redisPorts() {
		if p >= lo && p <= hi && !reserved.Contains(p) {
			reserved.Add(p)
			add = append(add, strconv.Itoa(p))
		}
	}
	if len(add) == 0 {
		return
	}
	pc.add("net-sysctl", change.Change{Kind: change.KindSysctl, Target: "net.ipv4.ip_local_reserved_ports", Value: reserved.List(),
		Why: fmt.Sprintf("keep Redis's ports %s out of the widened ephemeral range", strings.Join(add, ","))})
}

// redisPorts are the ports of the Redis servers in this network namespace
// (another namespace has its own port range) and, for cluster nodes,
// their bus ports (port+10000).
func (pc *planContext) redisPorts() []int {
	var out []int
	for i := range pc.in.Host.Processes {
		p := &pc.in.Host.Processes[i]
		if p.OtherNetNS() {
			continue
		}
		for _, l := range p.Listen {
			out = append(out, l.Port)
			if p.ClusterNode() {
				out = append(out, l.Port+10000)
			}
		}
	}
	if len(out) == 0 {
		out = []int{6379, 16379}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// twBuckets raises tcp_max_tw_buckets only when TIME_WAIT sockets have
// overflowed it; it is never lowered (ip-sysctl.rst: "you must not lower
// the limit artificially").
func (pc *planContext) twBuckets(snap *host.Snapshot) {
	cur, err := strconv.ParseInt(strings.TrimSpace(snap.Sysctls["net.ipv4.tcp_max_tw_buckets"]), 10, 64)
	if err != nil || snap.Net.TcpExt["TCPTimeWaitOverflow"] == 0 {
		return
	}
	pc.add("net-sysctl", change.Change{Kind: change.KindSysctl, Target: "net.ipv4.tcp_max_tw_buckets", Value: strconv.FormatInt(cur*2, 10),
		Why: fmt.Sprintf("TCPTimeWaitOverflow is %d: TIME_WAIT sockets were destroyed early", snap.Net.TcpExt["TCPTimeWaitOverflow"])})
}
