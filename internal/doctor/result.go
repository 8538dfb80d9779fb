package doctor

import (
	"fmt"
	"strconv"

	"redline/internal/change"
)

// Status is what a rule concluded.
type Status string

// Statuses.
const (
	// Fired: the problem is there.
	Fired Status = "fired"
	// OK: checked, and fine.
	OK Status = "ok"
	// NotApplicable: the rule does not apply to this host (one NUMA node,
	// no cpufreq, a kernel without the knob).
	NotApplicable Status = "not-applicable"
	// NotChecked: the rule applies but its inputs were missing (no server,
	// a server on another host, a file that needs root).
	NotChecked Status = "not-checked"
	// Errored: the check itself failed.
	Errored Status = "error"
)

// Evidence is one value a rule read, and where from: a path on the host
// ("/proc/sys/net/core/somaxconn"), or a Redis source ("CONFIG GET
// tcp-backlog", "INFO stats.rejected_connections").
type Evidence struct {
	Source string `json:"source"`
	Value  string `json:"value"`
	Note   string `json:"note,omitempty"`
	// Absent says the source has no such value (a sysctl the kernel
	// lacks, a CONFIG parameter the server does not know), as opposed to
	// an empty one (save "", an empty ip_local_reserved_ports).
	Absent bool `json:"absent,omitempty"`
}

// Ev builds an Evidence with a formatted value.
func Ev(source string, value any) Evidence {
	return Evidence{Source: source, Value: fmt.Sprint(value)}
}

// Fix is how to resolve a finding. Changes are what internal/tune can
// apply and journal. Advice covers what cannot be automated: BIOS, the
// kernel command line, redis.conf settings that need a restart,
// application changes.
type Fix struct {
	Changes []change.Change `json:"changes,omitempty"`
	// Undo has one purpose: the commands the reports print for someone
	// who runs the fix commands by hand, to put back the values doctor
	// read (one per change, same order). Nothing applies it: plans take
	// only Changes, and tune restores the value its journal records at
	// apply time, which is the right one even if the host changed since
	// the report.
	Undo   []change.Change `json:"undo,omitempty"`
	Advice []string        `json:"advice,omitempty"`
	// Persist says how to keep an applied change across a reboot.
	Persist []string `json:"persist,omitempty"`

	NeedsRoot         bool `json:"needs_root"`
	NeedsRedisRestart bool `json:"needs_redis_restart"`
	NeedsReboot       bool `json:"needs_reboot"`
	// Caution is said before anyone applies the fix (weaker durability,
	// more power, a write-up value the kernel documentation contradicts).
	Caution string `json:"caution,omitempty"`
}

// Set adds a change of target from old (the value the rule read) to
// value, and the manual undo back to old.
func (f *Fix) Set(kind change.Kind, target, value, old, why string) *Fix {
	f.Changes = append(f.Changes, change.Change{Kind: kind, Target: target, Value: value, Why: why})
	f.Undo = append(f.Undo, change.Change{Kind: kind, Target: target, Value: old, Why: "restore"})
	if kind != change.KindRedisConfig {
		f.NeedsRoot = true
	}
	return f
}

// IRQ adds the change that delivers irq on cpu alone (change.IRQAffinity),
// undone by writing old back.
func (f *Fix) IRQ(irq, cpu int, old, why string) *Fix {
	c := change.IRQAffinity(irq, cpu, why)
	return f.Set(c.Kind, c.Target, c.Value, old, why)
}

// Affinity adds a CPU affinity change of the redis-server whose pid and
// name (comm) are given, guarded by that name: apply refuses it if the
// pid has since been taken by another program, and validation refuses an
// affinity change without such a guard.
func (f *Fix) Affinity(pid int, comm, value, old, why string) *Fix {
	f.Set(change.KindAffinity, strconv.Itoa(pid), value, old, why)
	f.Changes[len(f.Changes)-1].Guard = "comm=" + comm
	f.Undo[len(f.Undo)-1].Guard = "comm=" + comm
	return f
}

// Sysctl adds a sysctl change and how to persist it.
func (f *Fix) Sysctl(name, value, old, why string) *Fix {
	f.Set(change.KindSysctl, name, value, old, why)
	f.Persist = append(f.Persist, fmt.Sprintf("echo '%s = %s' >> %s && sysctl --system", name, value, SysctlFile))
	return f
}

// SysctlFile is where doctor tells users to persist sysctls: one file that
// is obviously redline's, so undoing is deleting it.
const SysctlFile = "/etc/sysctl.d/90-redis-doctor.conf"

// Result is what a check returns.
type Result struct {
	Status Status
	// Severity, when set, overrides the rule's for this finding (a fork
	// rate below 10 GB/s is worse than one below 25).
	Severity *Severity
	// Message says what is wrong here, with the numbers; Reason why a rule
	// did not apply or could not check.
	Message  string
	Reason   string
	Evidence []Evidence
	Fix      *Fix
	// Notes add context: a write-up's value that the kernel documentation
	// contradicts, the caveat of a since-boot counter.
	Notes []string
}

// Fire returns a fired result.
func Fire(format string, args ...any) Result {
	return Result{Status: Fired, Message: fmt.Sprintf(format, args...)}
}

// Pass returns an OK result with a one-line summary of what was checked.
func Pass(format string, args ...any) Result {
	return Result{Status: OK, Message: fmt.Sprintf(format, args...)}
}

// Skip returns a not-applicable result.
func Skip(format string, args ...any) Result {
	return Result{Status: NotApplicable, Reason: fmt.Sprintf(format, args...)}
}

// Unchecked returns a not-checked result.
func Unchecked(format string, args ...any) Result {
	return Result{Status: NotChecked, Reason: fmt.Sprintf(format, args...)}
}

// With attaches evidence.
func (r Result) With(ev ...Evidence) Result {
	r.Evidence = append(r.Evidence, ev...)
	return r
}

// WithFix attaches a fix.
func (r Result) WithFix(f *Fix) Result {
	r.Fix = f
	return r
}

// WithSeverity overrides the rule's severity.
func (r Result) WithSeverity(s Severity) Result {
	r.Severity = &s
	return r
}

// Note adds a note.
func (r Result) Note(format string, args ...any) Result {
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
	return r
}
