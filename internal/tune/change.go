// Package tune applies and restores host and Redis changes. Every write is
// journaled (old value, fsync) before it happens, read back after it, and
// can be undone after a crash from the journal on disk. It is the only
// package that writes under /proc or /sys.
package tune

// Kind names what a Change writes.
type Kind string

// The kinds of change redline can make and undo.
const (
	// KindSysctl writes a sysctl; Target is its dotted name
	// ("net.core.somaxconn"), read and written under /proc/sys.
	KindSysctl Kind = "sysctl"
	// KindFile writes one file under /proc or /sys; Target is the absolute
	// path as on the live host ("/proc/irq/24/smp_affinity_list",
	// "/sys/class/net/eth0/queues/rx-0/rps_cpus",
	// "/sys/kernel/mm/transparent_hugepage/enabled").
	KindFile Kind = "file"
	// KindRedisConfig is a CONFIG SET; Target is the parameter name.
	KindRedisConfig Kind = "redis-config"
	// KindAffinity sets the CPU affinity of every thread of a process;
	// Target is the pid, Value a cpulist.
	KindAffinity Kind = "affinity"
	// KindService starts or stops a system service; Target is the unit
	// name ("irqbalance"), Value "active" or "inactive".
	KindService Kind = "service"
	// KindChannels sets a NIC's combined channel count; Target is the
	// interface name, Value the count.
	KindChannels Kind = "channels"
)

// Change is one reversible write: what to set, to what, and why. Doctor
// findings carry Changes, plans are lists of them, and the journal stores
// them together with the value they replaced.
type Change struct {
	Kind   Kind   `json:"kind" yaml:"kind"`
	Target string `json:"target" yaml:"target"`
	Value  string `json:"value" yaml:"value"`
	// Why is one line for the plan's diff; Rule is the doctor rule or
	// profile that asked for the change.
	Why  string `json:"why,omitempty" yaml:"why,omitempty"`
	Rule string `json:"rule,omitempty" yaml:"rule,omitempty"`
	// Guard, when set, must hold at apply time or the change is refused
	// as stale. For affinity it is "comm=NAME": the pid must still be that
	// program, so a plan never pins a process that reused the pid.
	Guard string `json:"guard,omitempty" yaml:"guard,omitempty"`
}
