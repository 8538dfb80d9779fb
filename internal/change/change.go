// Package change holds Change, one reversible write, and the pure value
// semantics of each Kind: what a valid target and value are, when two
// values are the same in normal form, how a value reads for people, and
// what undoes the change without redline. It never touches the machine:
// internal/tune owns the effects (read, write, restore) and internal/doctor
// proposes Changes; both import this leaf, so doctor need not link tune.
package change

import (
	"fmt"
	"net"
	"slices"
	"strings"
)

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
	// Node, on a redis-config change, is the address (host:port) of the
	// Redis server it goes to: one node of a cluster. Empty: the plan's
	// one server (redis.addr). Other kinds never name a node.
	Node string `json:"node,omitempty" yaml:"node,omitempty"`
}

// Kinds lists the known kinds, sorted.
func Kinds() []Kind {
	out := make([]Kind, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func semanticsOf(c Change) (semantics, error) {
	sem, ok := kinds[c.Kind]
	if !ok {
		return semantics{}, fmt.Errorf("unknown change kind %q (known: %v)", c.Kind, Kinds())
	}
	return sem, nil
}

// Validate checks c's kind, target and value without touching the machine.
func (c Change) Validate() error {
	sem, err := semanticsOf(c)
	if err != nil {
		return err
	}
	if err := validateChars(c); err != nil {
		return fmt.Errorf("%s %q: %w", c.Kind, c.Target, err)
	}
	if err := sem.validate(c); err != nil {
		return fmt.Errorf("%s %s: %w", c.Kind, c.Target, err)
	}
	return validateNode(c)
}

// validateNode accepts a node only on a redis-config change, and only as
// host:port.
func validateNode(c Change) error {
	if c.Node == "" {
		return nil
	}
	if c.Kind != KindRedisConfig {
		return fmt.Errorf("%s %s: node %q: only redis-config changes go to a node", c.Kind, c.Target, c.Node)
	}
	if r, bad := controlChar(c.Node, false); bad {
		return fmt.Errorf("%s %s: the node holds control character %q; refused", c.Kind, c.Target, r)
	}
	if h, p, err := net.SplitHostPort(c.Node); err != nil || h == "" || p == "" {
		return fmt.Errorf("%s %s: node %q is not host:port", c.Kind, c.Target, c.Node)
	}
	return nil
}

// validateChars refuses control characters: a newline in a value written
// to /proc or /sys ends the write early or writes a second value, and one
// in a target makes the journal and the plan lie about what was written.
// Tabs separate the fields of multi-value sysctls and stay allowed there;
// newlines separate the lines of a persist-file's content.
func validateChars(c Change) error {
	if r, bad := controlChar(c.Target, false); bad {
		return fmt.Errorf("the target holds control character %q; refused", r)
	}
	v := c.Value
	if c.Kind == KindPersist { // a file's content: its lines are the point
		v = strings.ReplaceAll(v, "\n", " ")
	}
	if r, bad := controlChar(v, true); bad {
		return fmt.Errorf("the value %q holds control character %q; refused", c.Value, r)
	}
	return nil
}

// Key identifies what c writes; two changes with the same key in one plan
// would fight.
// A redis-config change names its node, so one plan may set the same
// parameter on every node of a cluster.
func (c Change) Key() string {
	if c.Node != "" {
		return string(c.Kind) + " " + c.Target + " on " + c.Node
	}
	return string(c.Kind) + " " + c.Target
}

// String is the change as one line: "sysctl net.core.somaxconn = 8192",
// "redis-config hz = 100 on 127.0.0.1:7001".
func (c Change) String() string {
	s := fmt.Sprintf("%s %s = %s", c.Kind, c.Target, c.Value)
	if c.Node != "" {
		s += " on " + c.Node
	}
	return s
}

// LostOn says what undoes c without redline: "reboot", "Redis restart",
// "process exit".
func (c Change) LostOn() string { return kinds[c.Kind].lostOn }

// Same reports whether two values of c's target are equal in normal form
// ("0-1" and "0,1"; "1024\t65535" and "1024 65535"; "always [madvise]
// never" and "madvise"). Values of an unknown kind compare as strings.
func (c Change) Same(a, b string) bool {
	sem, err := semanticsOf(c)
	if err != nil {
		return a == b
	}
	return sem.same(c, a, b)
}

// Show formats a value of c's target for people (masks also as CPU lists).
func (c Change) Show(v string) string {
	sem, err := semanticsOf(c)
	if err != nil || sem.show == nil {
		return v
	}
	return sem.show(c, v)
}
