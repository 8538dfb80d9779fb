package change

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The allow-lists: tune writes only the kernel files and sysctls it has a
// reason to write, never "any path under /proc or /sys". /proc/self/root
// and /proc/PID/root lead to the whole filesystem, /proc/sysrq-trigger
// reboots the machine, kernel.core_pattern and kernel.modprobe run programs
// as root: none of them is a tuning knob.

// ifName is an interface name as the kernel allows it (no '/', no
// whitespace, at most 15 bytes); "." and ".." are refused separately.
const ifName = `[A-Za-z0-9_.:@+-]{1,15}`

// fileShapes are the kernel files tune may write, by path shape
// (compiled on first use: every redline command would pay for it at
// start-up).
var fileShapes = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`^/proc/irq/[0-9]+/smp_affinity(_list)?$`),
		regexp.MustCompile(`^/proc/irq/default_smp_affinity$`),
		regexp.MustCompile(`^/sys/class/net/` + ifName + `/queues/rx-[0-9]+/(rps_cpus|rps_flow_cnt)$`),
		regexp.MustCompile(`^/sys/class/net/` + ifName + `/queues/tx-[0-9]+/(xps_cpus|xps_rxqs)$`),
		regexp.MustCompile(`^/sys/kernel/mm/transparent_hugepage/(enabled|defrag|khugepaged/defrag)$`),
		regexp.MustCompile(`^/sys/block/[A-Za-z0-9_.:-]+/queue/(scheduler|nr_requests|read_ahead_kb|rq_affinity|nomerges|add_random|iostats)$`),
		regexp.MustCompile(`^/sys/devices/system/cpu/cpu[0-9]+/cpuidle/state[0-9]+/disable$`),
		regexp.MustCompile(`^/sys/devices/system/cpu/cpufreq/policy[0-9]+/(scaling_governor|energy_performance_preference)$`),
		regexp.MustCompile(`^/sys/devices/system/clocksource/clocksource[0-9]+/current_clocksource$`),
	}
})

// sysctlPrefixes are the sysctl subtrees tune may write (dotted, with a
// trailing dot) and single sysctls (without one).
var sysctlPrefixes = []string{
	"net.core.", "net.ipv4.", "net.ipv6.", "net.netfilter.", "net.unix.",
	"vm.",
	"kernel.numa_balancing", "kernel.sched_", "kernel.timer_migration",
	"fs.file-max", "fs.nr_open", "fs.aio-max-nr",
}

// allowedFile reports why tune will not write the file target p, or nil.
func allowedFile(p string) error {
	for _, re := range fileShapes() {
		if re.MatchString(p) && !hasDotSegment(p) {
			return nil
		}
	}
	if strings.HasPrefix(p, "/proc/sys/") {
		return fmt.Errorf("%q is a sysctl: write it as kind sysctl", p)
	}
	return fmt.Errorf("%q is not a file tune writes (IRQ affinities, RPS/XPS/RFS queue files, THP, block queue, cpuidle, cpufreq and clocksource files)", p)
}

func hasDotSegment(p string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == "." || s == ".." {
			return true
		}
	}
	return false
}

// allowedSysctl reports why tune will not write the sysctl whose path
// below /proc/sys is rel ("net/core/somaxconn"), or nil.
func allowedSysctl(rel string) error {
	dotted := strings.ReplaceAll(rel, "/", ".")
	for _, p := range sysctlPrefixes {
		subtree := strings.HasSuffix(p, ".") && strings.HasPrefix(dotted, p) && len(dotted) > len(p)
		if subtree || dotted == p || (strings.HasSuffix(p, "_") && strings.HasPrefix(dotted, p)) {
			return nil
		}
	}
	return fmt.Errorf("sysctl %s is not one tune writes (net.core, net.ipv4, net.ipv6, net.netfilter, vm, and a few kernel and fs scheduling and limit knobs)", dotted)
}

// deniedSysctls are refused inside the allowed subtrees, by the rule that
// tune never weakens the host's protections: memory-protection and
// sandbox knobs (mmap_min_addr, userfaultfd, BPF JIT hardening), privilege
// (unprivileged ports and ping), routing of traffic that is not the
// host's own (forwarding, route_localnet, redirects, source routes), the
// real-time throttle that keeps a runaway RT task from owning a CPU, and
// what panics or kills on pressure. A pattern ending in "_" is a prefix;
// "*" stands for one component (an interface: all, default, eth0).
var deniedSysctls = []string{
	"vm.mmap_min_addr", "vm.unprivileged_userfaultfd", "vm.mmap_rnd_bits", "vm.mmap_rnd_compat_bits",
	"vm.panic_on_oom", "vm.oom_kill_allocating_task", "vm.admin_reserve_kbytes", "vm.user_reserve_kbytes",
	"vm.drop_caches", "vm.compact_memory",
	"net.core.bpf_", "net.ipv4.ip_unprivileged_port_start", "net.ipv4.ping_group_range",
	"net.ipv4.ip_forward", "net.ipv4.conf.*.forwarding", "net.ipv4.conf.*.mc_forwarding", "net.ipv4.conf.*.route_localnet",
	"net.ipv4.conf.*.accept_redirects", "net.ipv4.conf.*.secure_redirects", "net.ipv4.conf.*.accept_source_route",
	"net.ipv4.conf.*.proxy_arp", "net.ipv4.conf.*.bootp_relay",
	"net.ipv6.conf.*.forwarding", "net.ipv6.conf.*.accept_redirects", "net.ipv6.conf.*.accept_source_route",
	"net.ipv6.conf.*.proxy_ndp", "net.ipv6.conf.*.disable_ipv6",
	"kernel.sched_rt_runtime_us", "kernel.sched_rt_period_us",
	// Held out (issue 24 item 12): a host address that accepts its own
	// source (accept_local), IPsec policy off (disable_policy,
	// disable_xfrm), router advertisements taken (accept_ra), binding
	// addresses the host does not have (ip_nonlocal_bind), sockets of
	// the default VRF serving every VRF (l3mdev_accept), conntrack
	// helpers assigned to every flow, the mmap layout of old, the
	// hugetlb shared-memory group, smurf echo replies.
	"net.ipv4.conf.*.accept_local", "net.ipv4.conf.*.disable_policy", "net.ipv4.conf.*.disable_xfrm",
	"net.ipv6.conf.*.disable_policy", "net.ipv6.conf.*.accept_ra",
	"net.ipv4.ip_nonlocal_bind", "net.ipv6.ip_nonlocal_bind",
	"net.ipv4.tcp_l3mdev_accept", "net.ipv4.udp_l3mdev_accept", "net.ipv4.raw_l3mdev_accept",
	"net.netfilter.nf_conntrack_helper", "vm.legacy_va_layout", "vm.hugetlb_shm_group",
	"net.ipv4.icmp_echo_ignore_broadcasts",
}

// sysctlFloors are the sysctls tune may raise or keep, never set below a
// floor (patterns as deniedSysctls'; the first number of the value is
// compared): limits a loaded host needs (fs.file-max=64 makes every open
// fail), and protections whose lower values weaken them: an ephemeral
// port range starting below 1024 hands privileged ports to any user's
// bind(port 0) (as ip_unprivileged_port_start would), syncookies off,
// reverse-path filtering off.
var sysctlFloors = []struct {
	pattern string
	floor   uint64
}{
	{"fs.file-max", 65536}, {"fs.nr_open", 65536}, {"fs.aio-max-nr", 65536},
	{"net.ipv4.ip_local_port_range", 1024}, {"net.ipv4.tcp_syncookies", 1},
	{"net.ipv4.conf.*.rp_filter", 1},
}

// deniedSysctl reports why the sysctl whose path below /proc/sys is rel
// is refused with value, or nil. Components are compared as the kernel's
// path has them, so an interface with a dot (eth0.10) is one component.
func deniedSysctl(rel, value string) error {
	dotted := strings.ReplaceAll(rel, "/", ".")
	for _, pat := range deniedSysctls {
		if sysctlMatch(pat, rel) {
			return fmt.Errorf("sysctl %s is refused: tune never weakens the host's protections (memory protection, BPF hardening, privileged ports, forwarding and routing, RT throttling, panics; internal/change deniedSysctls)", dotted)
		}
	}
	for _, f := range sysctlFloors {
		if !sysctlMatch(f.pattern, rel) {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimSpace(value), "\t")
		first, _, _ = strings.Cut(strings.TrimSpace(first), " ")
		if n, err := strconv.ParseUint(first, 10, 64); err != nil || n < f.floor {
			return fmt.Errorf("sysctl %s = %q: want a number of at least %d (a lower value starves the host or weakens its protections)", dotted, value, f.floor)
		}
	}
	return nil
}

func sysctlMatch(pat, rel string) bool {
	if strings.HasSuffix(pat, "_") {
		return strings.HasPrefix(strings.ReplaceAll(rel, "/", "."), pat)
	}
	p, n := strings.Split(pat, "."), strings.Split(rel, "/")
	if len(p) != len(n) {
		return false
	}
	for i := range p {
		if p[i] != "*" && p[i] != n[i] {
			return false
		}
	}
	return true
}

// controlChar returns the first control character in s, other than a tab
// when tabs are allowed (multi-value sysctls read back with tabs).
func controlChar(s string, tabOK bool) (rune, bool) {
	for _, r := range s {
		if (r < 0x20 || r == 0x7f) && !(tabOK && r == '\t') {
			return r, true
		}
	}
	return 0, false
}
