// Package knobs is the typed catalog of what redline autotune may change:
// each knob's kind, the values it tries, how the change is applied and
// verified (as change.Changes through tune, as a tune profile planned on
// the host, or as a change of the managed server's start-up spec), whether
// the server must restart, its safety class and why it may matter. It is a
// leaf: the change allow-lists (internal/change) decide what is writable,
// and a test holds every entry to them.
package knobs

import (
	"fmt"
	"slices"
	"strconv"

	"redline/internal/change"
)

// Kind is what a knob turns.
type Kind string

// The kinds of knob.
const (
	KindSysctl       Kind = "sysctl"        // a sysctl, as a change.KindSysctl
	KindSysFile      Kind = "sys-file"      // one file under /sys, as a change.KindFile
	KindIRQProfile   Kind = "irq-placement" // a tune profile that places queue IRQs
	KindRPSXPS       Kind = "rps-xps"       // the rps-xps tune profile
	KindProfile      Kind = "tune-profile"  // another tune profile (net-sysctl, memory, redis-config)
	KindRedisConfig  Kind = "redis-config"  // a CONFIG SET, as a change.KindRedisConfig
	KindRedisRestart Kind = "redis-restart" // a setting read only at start-up (managed servers)
	KindAllocator    Kind = "allocator"     // the malloc the managed server runs with
	KindServerCPUs   Kind = "server-cpus"   // the managed server's CPU set or NUMA node
	KindServerBuild  Kind = "server-build"  // the managed server's binary, one the session built (redline build)
	KindSteer        Kind = "steer"         // redline steer on or off
	KindBoot         Kind = "boot"          // a kernel command-line setting: listed, never tried
)

// Safety says when autotune may try a knob.
type Safety string

// The safety classes.
const (
	// Safe knobs change performance only and are undone exactly.
	Safe Safety = "safe"
	// Review knobs change durability, memory limits, security or behaviour
	// other services on the host feel: tried only with --allow NAME.
	Review Safety = "review"
	// Never knobs need a reboot: listed so the report can say why they
	// were not tried.
	Never Safety = "never"
)

// Method is how a knob's value reaches the target.
type Method string

// The methods.
const (
	// ByChange: one change.Change applied, read back and journaled by tune.
	ByChange Method = "change"
	// ByProfile: a tune profile planned over a snapshot of the host, its
	// changes applied by tune.
	ByProfile Method = "profile"
	// ByServerSpec: the managed server is restarted with another spec
	// (lab ServerSpec: config line, allocator, CPU set).
	ByServerSpec Method = "server-spec"
	// BySteer: redline steer runs during the measurement.
	BySteer Method = "steer"
	// NotApplied: autotune never applies it.
	NotApplied Method = "none"
)

var methods = map[Kind]Method{
	KindSysctl: ByChange, KindSysFile: ByChange, KindRedisConfig: ByChange,
	KindIRQProfile: ByProfile, KindRPSXPS: ByProfile, KindProfile: ByProfile,
	KindRedisRestart: ByServerSpec, KindAllocator: ByServerSpec, KindServerCPUs: ByServerSpec, KindServerBuild: ByServerSpec,
	KindSteer: BySteer, KindBoot: NotApplied,
}

// changeKinds maps the knob kinds applied as one change onto the change
// kind tune knows.
var changeKinds = map[Kind]change.Kind{
	KindSysctl: change.KindSysctl, KindSysFile: change.KindFile, KindRedisConfig: change.KindRedisConfig,
}

// Knob is one thing autotune may turn.
type Knob struct {
	// Name is unique in the catalog: "redis.hz", "sysctl.net.core.somaxconn".
	Name string
	Kind Kind
	// Target is what the kind writes: the sysctl's dotted name, the file's
	// path, the Redis parameter, the tune profile, "allocator", "cpus".
	Target string
	// Values are the values tried, in order; for a numeric knob they are
	// the screening grid and refinement searches between them. A knob
	// whose values the session names (SessionValues) has none here.
	Values []string
	// Numeric knobs are refined around their best screened value.
	Numeric bool
	// Restart says the server must restart for the value to take effect.
	Restart bool
	Safety  Safety
	// Why is one line on why the knob may matter, with its source.
	Why string
	// Source names where the knob comes from: a doctor rule, a tune
	// profile, a write-up, the Redis documentation.
	Source string
	// Requires, when set, names the knob this one depends on: it does
	// nothing while that knob is at its idle value.
	Requires *Requirement
}

// Requirement is a knob that makes another matter: Knob at any value but
// Idle (io-threads-do-reads does nothing while io-threads is 1).
type Requirement struct {
	Knob string
	Idle string
}

// Method is how k is applied.
func (k Knob) Method() Method { return methods[k.Kind] }

// Change is the change that sets k to value, for knobs applied as one
// change; ok is false for the others.
func (k Knob) Change(value string) (c change.Change, ok bool) {
	ck, ok := changeKinds[k.Kind]
	if !ok {
		return change.Change{}, false
	}
	return change.Change{Kind: ck, Target: k.Target, Value: value, Why: k.Why, Rule: "autotune:" + k.Name}, true
}

// On is the value of a profile or steer knob that turns it on; the
// baseline (the target as found) is off.
const On = "on"

// Start is what a restart knob changes in the managed server's start-up
// spec: one redis.conf line, the allocator, the CPU set (CPUs is
// symbolic: "numa-nic" or "unpinned"; the host side resolves it), or the
// binary (Build is the name the session gave a build spec; the host side
// builds it and runs the result).
type Start struct {
	ConfigLine string
	Allocator  string
	CPUs       string
	Build      string
}

// Start is the start-up change that sets k to value, for knobs applied by
// a server restart; ok is false for the others.
func (k Knob) Start(value string) (s Start, ok bool) {
	switch k.Kind {
	case KindRedisRestart:
		return Start{ConfigLine: k.Target + " " + value}, true
	case KindAllocator:
		return Start{Allocator: value}, true
	case KindServerCPUs:
		return Start{CPUs: value}, true
	case KindServerBuild:
		return Start{Build: value}, true
	}
	return Start{}, false
}

// SessionValues says k's values are named by the session, not the
// catalog: server.build's are the names of autotune's --build NAME=SPEC.
func (k Knob) SessionValues() bool { return k.Kind == KindServerBuild }

// Profile is the tune profile k turns on, for profile knobs.
func (k Knob) Profile() (name string, ok bool) {
	if k.Method() != ByProfile {
		return "", false
	}
	return k.Target, true
}

// ForChange returns the knob that makes c (a doctor fix's change): a
// knob applied as one change of the same kind and target. The value is
// c's; ok is false when no knob makes such a change.
func ForChange(c change.Change) (Knob, bool) {
	for _, k := range catalog {
		if ck, ok := changeKinds[k.Kind]; ok && ck == c.Kind && k.Target == c.Target {
			return k, true
		}
	}
	return Knob{}, false
}

// Validate checks k: a known kind and safety class, values, a source and a
// reason, and for knobs applied as changes every value against the change
// allow-lists (change.Change.Validate).
func (k Knob) Validate() error {
	if _, ok := methods[k.Kind]; !ok {
		return fmt.Errorf("knob %s: unknown kind %q", k.Name, k.Kind)
	}
	if !slices.Contains([]Safety{Safe, Review, Never}, k.Safety) {
		return fmt.Errorf("knob %s: unknown safety class %q", k.Name, k.Safety)
	}
	if k.Name == "" || k.Why == "" || k.Source == "" {
		return fmt.Errorf("knob %q: a knob needs a name, a why and a source", k.Name)
	}
	if len(k.Values) == 0 && !k.SessionValues() {
		return fmt.Errorf("knob %s: no values to try", k.Name)
	}
	for _, v := range k.Values {
		if err := k.validateValue(v); err != nil {
			return fmt.Errorf("knob %s: %w", k.Name, err)
		}
	}
	return nil
}

func (k Knob) validateValue(v string) error {
	if k.Numeric {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return fmt.Errorf("value %q is not a number", v)
		}
	}
	if c, ok := k.Change(v); ok {
		return c.Validate()
	}
	if k.Method() == ByProfile || k.Method() == BySteer {
		if v != On {
			return fmt.Errorf("value %q: a profile or steer is tried %q (the baseline is off)", v, On)
		}
	}
	return nil
}

// Catalog returns every knob, in catalog order.
func Catalog() []Knob { return slices.Clone(catalog) }

// Lookup returns the knob named name.
func Lookup(name string) (Knob, bool) {
	i := slices.IndexFunc(catalog, func(k Knob) bool { return k.Name == name })
	if i < 0 {
		return Knob{}, false
	}
	return catalog[i], true
}

// Allowed reports whether autotune may try k: safe knobs always, review
// knobs when named in allow, never knobs never.
func (k Knob) Allowed(allow []string) bool {
	switch k.Safety {
	case Safe:
		return true
	case Review:
		return slices.Contains(allow, k.Name)
	}
	return false
}
