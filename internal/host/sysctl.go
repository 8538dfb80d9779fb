package host

import (
	"strconv"
	"strings"
)

// Sysctls are files under /proc/sys, named with dots:
//
//	/proc/sys/net/core/somaxconn     4096
//	/proc/sys/net/ipv4/tcp_rmem      4096	131072	6291456
//	/proc/sys/net/ipv4/ip_local_port_range   32768	60999

// SysctlNames are the sysctls a snapshot reads: every one that
// ../shared/reference/checks.md's rules use, and a few neighbours.
// Net ones are per network namespace (some, like netdev_max_backlog,
// exist only in the initial one).
var SysctlNames = []string{
	"net.core.somaxconn",
	"net.core.netdev_max_backlog",
	"net.core.netdev_budget",
	"net.core.netdev_budget_usecs",
	"net.core.rps_sock_flow_entries",
	"net.core.busy_read",
	"net.core.busy_poll",
	"net.core.rmem_max",
	"net.core.wmem_max",
	"net.core.rmem_default",
	"net.core.wmem_default",
	"net.ipv4.tcp_max_syn_backlog",
	"net.ipv4.tcp_max_tw_buckets",
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
	"net.ipv4.tcp_mem",
	"net.ipv4.tcp_fin_timeout",
	"net.ipv4.tcp_tw_reuse",
	"net.ipv4.tcp_tw_recycle",
	"net.ipv4.tcp_syncookies",
	"net.ipv4.tcp_slow_start_after_idle",
	"net.ipv4.tcp_notsent_lowat",
	"net.ipv4.tcp_fastopen",
	"net.ipv4.ip_local_port_range",
	"net.ipv4.ip_local_reserved_ports",
	"net.ipv4.ip_unprivileged_port_start",
	"vm.overcommit_memory",
	"vm.overcommit_ratio",
	"vm.swappiness",
	"vm.zone_reclaim_mode",
	"vm.max_map_count",
	"vm.dirty_ratio",
	"vm.dirty_background_ratio",
	"kernel.numa_balancing",
	"kernel.sched_autogroup_enabled",
	"kernel.pid_max",
	"fs.file-max",
	"fs.nr_open",
	"fs.file-nr",
}

// SysctlPath returns the /proc/sys file of a dotted sysctl name.
func SysctlPath(name string) string {
	return "/proc/sys/" + strings.ReplaceAll(name, ".", "/")
}

func readSysctls(r *reader) error {
	for _, name := range SysctlNames {
		if v, ok := r.str(SysctlPath(name)); ok {
			r.snap.Sysctls[name] = normalizeSysctl(v)
		}
	}
	return nil
}

// normalizeSysctl collapses the tabs of multi-value sysctls to single
// spaces, as `sysctl -n` prints them.
func normalizeSysctl(v string) string { return strings.Join(strings.Fields(v), " ") }

// Int returns an integer sysctl; ok is false when it is absent or not an
// integer.
func (s Sysctls) Int(name string) (int64, bool) {
	v, ok := s[name]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// Ints returns a multi-value sysctl ("4096 131072 6291456").
func (s Sysctls) Ints(name string) ([]int64, bool) {
	v, ok := s[name]
	if !ok {
		return nil, false
	}
	var out []int64
	for _, f := range strings.Fields(v) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}
