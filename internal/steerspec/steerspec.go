// Package steerspec holds a steer session's settings, their one set of
// ranges, and what a session did: the words redline steer, the lab's
// scenarios, the server-host API and the saved results share.
package steerspec

import (
	"time"

	"redline/internal/percent"
)

// Spec runs redline steer (dynamic NIC interrupt steering, docs/steer.md)
// while a variant measures: started when the variant starts, stopped (every
// IRQ restored) when its runs end. Zero fields take steer's defaults.
type Spec struct {
	// Period is the decision period (steer's default 1s).
	Period time.Duration `json:"period_ns,omitempty" yaml:"period,omitempty"`
	// Periods is the hysteresis: how many periods in a row a node must
	// hold the majority of a queue's packets before its IRQ moves.
	Periods int `json:"periods,omitempty" yaml:"periods,omitempty"`
	// Majority is the share of a queue's packets one node must consume.
	Majority percent.Value `json:"majority,omitempty" yaml:"majority,omitempty"`
	// MinPackets is the sampled packets per period that make a queue busy
	// enough to judge.
	MinPackets uint64 `json:"min_packets,omitempty" yaml:"min_packets,omitempty"`
	// Sample follows about one skb in Sample (a power of two, 1 to 64).
	Sample int `json:"sample,omitempty" yaml:"sample,omitempty"`
	// Domain is what a queue's IRQ is kept in: "node" (NUMA node, the
	// default) or "llc" (the CPUs sharing a last-level cache).
	Domain string `json:"domain,omitempty" yaml:"domain,omitempty"`
	// DryRun decides and records the moves steer would make, writing
	// nothing.
	DryRun bool `json:"dry_run,omitempty" yaml:"dry_run,omitempty"`
}

// Session is what one steer session did during one round of a
// variant: from the variant's start to the end of its runs.
type Session struct {
	Rep      int       `json:"rep"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	DryRun   bool      `json:"dry_run,omitempty"`
	Periods  int       `json:"periods"`
	// Moves are the IRQ moves made (in a dry run: proposed), in order.
	Moves []Move `json:"moves,omitempty"`
	// Drifts are IRQs someone else changed after steer wrote them (steer
	// left them alone), as "irq 30 (eth0 rx-0): steer wrote 4, now 0-7".
	Drifts []string `json:"drifts,omitempty"`
	// Final is the queue map of the last period, before the restore.
	Final []Queue `json:"final,omitempty"`
	// SamplerCPU is the sampler thread's CPU time over the session as a
	// fraction of one CPU; Events and Lost are the tracepoint records it
	// read and those the kernel dropped.
	SamplerCPU float64 `json:"sampler_cpu"`
	Events     uint64  `json:"events"`
	Lost       uint64  `json:"lost"`
	// Restored says what stopping steer restored; RestoreError is set when
	// the restore failed (redline tune rollback then finishes it).
	Restored     string `json:"restored,omitempty"`
	RestoreError string `json:"restore_error,omitempty"`
	// Irqbalance says what was done about a running irqbalance, if any.
	Irqbalance string `json:"irqbalance,omitempty"`
	// Notes are what steer reported otherwise (IRQs it could not move, a
	// sampler failure).
	Notes []string `json:"notes,omitempty"`
}

// Move is one IRQ move.
type Move struct {
	Time   time.Time `json:"time"`
	IRQ    int       `json:"irq"`
	Queue  string    `json:"queue"` // "eth0 rx-0"
	From   string    `json:"from"`  // cpulist
	To     int       `json:"to"`
	Reason string    `json:"reason"`
}

// Queue is one queue in steer's map at the end of a session. A
// queue without an IRQ (veth) has no IRQ and On: steer sees its packets
// but has nothing to move.
type Queue struct {
	Queue string `json:"queue"` // "eth0 rx-0"
	IRQ   int    `json:"irq,omitempty"`
	On    string `json:"on,omitempty"` // cpulist the IRQ is delivered on
	// Matched is the session's sampled packets of the queue followed to
	// their consumer, and Consumers the same by the consuming CPU.
	Matched   uint64         `json:"matched"`
	Consumers map[int]uint64 `json:"consumers,omitempty"`
	// Preferred is the domain (node or LLC) steer judged the queue's home
	// in the last period; nil when none held a clear majority.
	Preferred *int `json:"preferred,omitempty"`
	Drifted   bool `json:"drifted,omitempty"`
}

// Check calls bad for every setting of s out of range, with the field's
// name: the one set of rules for a scenario's steer and a remote
// session's steer.start, where a zero field takes steer's default.
func (s Spec) Check(bad func(field, format string, args ...any)) {
	for _, r := range s.rules() {
		if !r.zero && r.bad {
			bad(r.field, r.format+r.yamlHint, r.arg)
		}
	}
}

// CheckGiven is Check for settings that are all given, as on redline
// steer's command line (its flags default to steer's defaults): a zero is
// out of range there too.
func (s Spec) CheckGiven(bad func(field, format string, args ...any)) {
	for _, r := range s.rules() {
		if r.bad {
			bad(r.field, r.format, r.arg)
		}
	}
}

// rule is one setting's range: zero says it is unset, bad that it is out
// of range; yamlHint is how a scenario may write it as well.
type rule struct {
	field     string
	zero, bad bool
	format    string
	yamlHint  string
	arg       any
}

func (s Spec) rules() []rule {
	return []rule{
		{field: "period", zero: s.Period == 0, bad: s.Period < 10*time.Millisecond, format: "%s: want at least 10ms", arg: s.Period},
		{field: "periods", zero: s.Periods == 0, bad: s.Periods < 1, format: "%d: want at least 1", arg: s.Periods},
		{field: "majority", zero: s.Majority == 0, bad: s.Majority <= 0.5 || s.Majority > 1,
			format: "%g: want more than 0.5 and at most 1", yamlHint: " (or 50%%..100%%)", arg: float64(s.Majority)},
		{field: "sample", zero: s.Sample == 0, bad: s.Sample < 1 || s.Sample > 64 || s.Sample&(s.Sample-1) != 0,
			format: "%d: want a power of two from 1 to 64", arg: s.Sample},
		{field: "domain", zero: s.Domain == "", bad: s.Domain != "node" && s.Domain != "llc", format: "%q: want node or llc", arg: s.Domain},
	}
}
