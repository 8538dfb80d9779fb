// Package doctor runs rules over a host snapshot and a Redis server's
// INFO and CONFIG and reports findings: what is wrong, the values that show
// it (with the paths they were read from), the exact change that fixes it
// and the change that undoes the fix.
//
// Rules live one per file in internal/doctor/rules and register themselves
// from init, as node_exporter's collectors do; import that package (blank)
// wherever Run is called. Doctor reads only: fixes are data (change.Change)
// that internal/tune applies behind its journal.
package doctor

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Severity ranks findings.
type Severity int

// Severities, lowest first.
const (
	Info Severity = iota
	Low
	Medium
	High
)

var severityNames = []string{"info", "low", "medium", "high"}

// String returns "info", "low", "medium" or "high".
func (s Severity) String() string {
	if s < Info || s > High {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// MarshalText writes the name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	*s = v
	return err
}

// ParseSeverity reads "info", "low", "medium" or "high" (or their first
// letters, as the check catalogue writes them).
func ParseSeverity(name string) (Severity, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for i, s := range severityNames {
		if n == s || n == s[:1] {
			return Severity(i), nil
		}
	}
	return Info, fmt.Errorf("unknown severity %q (use info, low, medium or high)", name)
}

// Need says what a rule reads; Run reports the rule as not checked when
// the facts lack it, so a check function may assume what it needs.
type Need uint8

// Needs.
const (
	// NeedHost: the host snapshot.
	NeedHost Need = 1 << iota
	// NeedRedis: the server's INFO (and usually CONFIG).
	NeedRedis
	// NeedRedisProcess: the server runs on this host and the snapshot
	// describes its process (threads, limits, affinity).
	NeedRedisProcess
	// PerServer: the check judges the server's process when the snapshot
	// has one (its CPUs) and the host alone otherwise; with several
	// servers it runs once for each, as process rules do.
	PerServer
	// PerNetNS: the check judges values of the server's network namespace
	// (net.* sysctls, its TCP counters); with several servers in different
	// namespaces it runs once for each namespace, naming its servers.
	PerNetNS
	// NeedCluster: the server is a Redis Cluster node and Facts.Cluster
	// holds every node's facts; the rule judges the cluster once.
	NeedCluster
	// ReadsRedis: a host rule that refines its judgement with the server's
	// settings when there is one (somaxconn against tcp-backlog). In a
	// cluster it runs once per node on this host, or once without a
	// server when no node is on this host.
	ReadsRedis
	// CombinesNodes: a ReadsRedis rule whose fix is one host value for
	// every server (a list sysctl such as ip_local_reserved_ports). In a
	// cluster it runs once over the local nodes of each network namespace
	// (Facts.Servers) instead of once per node, whose fixes would each set
	// the whole list and conflict.
	CombinesNodes
)

// Rule is one check. Rules are values registered once at init.
type Rule struct {
	ID string
	// Section is the check catalogue's section: see Sections.
	Section string
	// Severity is the severity of a finding unless the check raises or
	// lowers it for a specific case.
	Severity Severity
	Title    string
	// Why is one line saying why this matters; Source the references it
	// rests on, in the catalogue's keys ("RS server.c; K-ip").
	Why    string
	Source string
	Needs  Need
	// Reads names the snapshot probes the check reads ("interrupts",
	// "nics", "softirqs": host.SourceError.Source). When one of them
	// failed, Run reports the rule as errored (a file that did not parse)
	// or not checked (a file refused), instead of judging what is left.
	Reads []string
	// Proves is what an ok must show for its own claim: every entry
	// must be matched by the Source of one piece of the ok's evidence. An
	// entry is one or more patterns separated by "|", in which "*"
	// matches any text ("/sys/devices/system/cpu/cpufreq/policy*/scaling_governor").
	// An ok that lacks one is reported as not checked: the allowed CPUs
	// are no evidence that their governor is performance.
	Proves []string
	Check  func(*Facts) Result
}

// Sections are the catalogue's sections, in report order.
var Sections = []string{"redis-startup", "network", "numa-cpu", "memory", "tcp", "redis", "cluster", "client"}

var (
	regMu    sync.Mutex
	registry = map[string]Rule{}
)

var idPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Register adds a rule. It panics on a malformed or duplicate rule: rules
// register from init, so this is a programming error found by any test.
func Register(r Rule) {
	regMu.Lock()
	defer regMu.Unlock()
	switch {
	case !idPattern.MatchString(r.ID):
		panic(fmt.Sprintf("doctor: rule id %q is not lower-case-with-dashes", r.ID))
	case registry[r.ID].ID != "":
		panic("doctor: rule " + r.ID + " registered twice")
	case r.Check == nil || r.Title == "" || r.Why == "" || r.Source == "":
		panic("doctor: rule " + r.ID + " needs a title, a why, a source and a check")
	case !validSection(r.Section):
		panic(fmt.Sprintf("doctor: rule %s: unknown section %q", r.ID, r.Section))
	}
	registry[r.ID] = r
}

func validSection(s string) bool {
	for _, x := range Sections {
		if x == s {
			return true
		}
	}
	return false
}

// Rules returns the registered rules, by section then ID.
func Rules() []Rule {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]Rule, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(a, b int) bool {
		sa, sb := sectionIndex(out[a].Section), sectionIndex(out[b].Section)
		if sa != sb {
			return sa < sb
		}
		return out[a].ID < out[b].ID
	})
	return out
}

func sectionIndex(s string) int {
	for i, x := range Sections {
		if x == s {
			return i
		}
	}
	return len(Sections)
}
