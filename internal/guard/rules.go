package guard

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Thresholds are the rules' settings. Every rule compares the last Span
// ticks of the watch with the baseline and must hold on Confirm
// evaluations in a row (one a tick) before it trips: a regression has to
// last, a blip does not undo a change.
type Thresholds struct {
	Span    int `json:"span"`
	Confirm int `json:"confirm"`
	// Probe latency: the median over the span of each tick's probe p99
	// above both LatencyRatio × the baseline's and the baseline's +
	// LatencyFloor. A tick with under half the probe replies it should
	// have had counts as infinitely slow (a stalled server answers
	// nothing).
	LatencyRatio float64       `json:"latency_ratio"`
	LatencyFloor time.Duration `json:"latency_floor"`
	// Server-side time per call (commandstats usec/calls over the span).
	ServerLatencyRatio float64       `json:"server_latency_ratio"`
	ServerLatencyFloor time.Duration `json:"server_latency_floor"`
	// Error replies per second over the span above ErrorsRatio × the
	// baseline's + ErrorsFloor.
	ErrorsRatio float64 `json:"errors_ratio"`
	ErrorsFloor float64 `json:"errors_floor"`
	// Rejected connections per second above the baseline's + RejectedFloor.
	RejectedFloor float64 `json:"rejected_floor"`
	// Evictions per second above EvictionsRatio × the baseline's +
	// EvictionsFloor.
	EvictionsRatio float64 `json:"evictions_ratio"`
	EvictionsFloor float64 `json:"evictions_floor"`
	// MemoryMax: RSS against the host's memory, or used memory against
	// maxmemory, at or above this share when the baseline was below it.
	MemoryMax float64 `json:"memory_max"`
	// RSSGrowth: RSS above this many times the baseline's (and 64 MiB more).
	RSSGrowth float64 `json:"rss_growth"`
	// CPU: the server's CPU time per command above CPURatio × the
	// baseline's while its CPU use is up by CPUFloor cores or more.
	CPURatio float64 `json:"cpu_ratio"`
	CPUFloor float64 `json:"cpu_floor"`
	// OpsDrop: commands per second below this share of the baseline's, when
	// the baseline served at least OpsMin per second (0 turns it off).
	OpsDrop float64 `json:"ops_drop"`
	OpsMin  float64 `json:"ops_min"`
}

// DefaultThresholds are the defaults: DBtune's guardrails (revert at 90%
// memory, at 2× latency, on a collapse of throughput) with floors that
// keep loopback-scale noise from tripping them.
func DefaultThresholds() Thresholds {
	return Thresholds{
		Span: 10, Confirm: 3,
		LatencyRatio: 2, LatencyFloor: time.Millisecond,
		ServerLatencyRatio: 2, ServerLatencyFloor: 100 * time.Microsecond,
		ErrorsRatio: 2, ErrorsFloor: 1,
		RejectedFloor:  0.2,
		EvictionsRatio: 2, EvictionsFloor: 100,
		MemoryMax: 0.9, RSSGrowth: 1.5,
		CPURatio: 2, CPUFloor: 0.25,
		OpsDrop: 0.5, OpsMin: 1000,
	}
}

// Validate says which threshold is out of range.
func (t Thresholds) Validate() error {
	checks := []struct {
		bad  bool
		what string
	}{
		{t.Span < 1, "the span must be at least 1 tick"},
		{t.Confirm < 1, "confirm must be at least 1"},
		{t.LatencyRatio < 1 || t.ServerLatencyRatio < 1 || t.ErrorsRatio < 1 || t.EvictionsRatio < 1 || t.CPURatio < 1, "a ratio must be at least 1"},
		{t.LatencyFloor < 0 || t.ServerLatencyFloor < 0 || t.ErrorsFloor < 0 || t.RejectedFloor < 0 || t.EvictionsFloor < 0 || t.CPUFloor < 0, "a floor must not be negative"},
		{t.MemoryMax <= 0 || t.MemoryMax > 1, "the memory share must be in (0, 1]"},
		{t.RSSGrowth < 1, "the RSS growth must be at least 1"},
		{t.OpsDrop < 0 || t.OpsDrop >= 1, "the ops drop must be in [0, 1)"},
	}
	for _, c := range checks {
		if c.bad {
			return fmt.Errorf("guard thresholds: %s", c.what)
		}
	}
	return nil
}

// Baseline is the server's health before the change.
type Baseline struct {
	Ticks int `json:"ticks"`
	// ProbeP99Ms is the median of the ticks' probe p99, ProbeP99Q3Ms
	// their upper quartile (what the ratio multiplies: a baseline that
	// happened to be quiet does not make a normal minute look slow).
	ProbeP99Ms        float64 `json:"probe_p99_ms"`
	ProbeP99Q3Ms      float64 `json:"probe_p99_q3_ms"`
	ServerUsecPerCall float64 `json:"server_usec_per_call"`
	CPU               float64 `json:"cpu"`
	CPUPerCommand     float64 `json:"cpu_per_command"`
	CommandsPerSec    float64 `json:"commands_per_sec"`
	ErrorsPerSec      float64 `json:"errors_per_sec"`
	RejectedPerSec    float64 `json:"rejected_per_sec"`
	EvictedPerSec     float64 `json:"evicted_per_sec"`
	UsedMemory        int64   `json:"used_memory"`
	RSS               int64   `json:"used_memory_rss"`
	MaxMemory         int64   `json:"maxmemory"`
	HostMemory        int64   `json:"total_system_memory"`
}

// span is a run of ticks summed up as the rules read them.
type span struct {
	probeP99Ms                             float64 // median of the ticks' p99 (+Inf for a starved tick)
	usecPerCall                            float64
	cpu, cpuPerCommand, commands           float64
	errors, rejected, evicted              float64
	usedMemory, rss, maxMemory, hostMemory int64
}

// summarize sums ticks up; expected is how many probe replies a second
// the probe should get (0: do not judge starvation).
func summarize(ticks []Tick, expected float64) span {
	var s span
	var sec, cpuSec float64
	var calls, usec int64
	p99s := make([]float64, 0, len(ticks))
	for _, t := range ticks {
		sec += t.Seconds
		cpuSec += t.CPU * t.Seconds
		s.commands += t.CommandsPerSec * t.Seconds
		s.errors += t.ErrorsPerSec * t.Seconds
		s.rejected += t.RejectedPerSec * t.Seconds
		s.evicted += t.EvictedPerSec * t.Seconds
		calls += t.Calls
		usec += t.Usec
		p := t.ProbeP99Ms
		if expected > 0 && float64(t.ProbeRequests) < expected*t.Seconds/2 {
			p = math.Inf(1)
		}
		p99s = append(p99s, p)
	}
	if sec > 0 {
		s.cpu, s.errors, s.rejected, s.evicted = cpuSec/sec, s.errors/sec, s.rejected/sec, s.evicted/sec
		if s.commands > 0 {
			s.cpuPerCommand = cpuSec / s.commands
		}
		s.commands /= sec
	}
	if calls > 0 {
		s.usecPerCall = float64(usec) / float64(calls)
	}
	s.probeP99Ms = median(p99s)
	if n := len(ticks); n > 0 {
		last := ticks[n-1]
		s.usedMemory, s.rss, s.maxMemory, s.hostMemory = last.UsedMemory, last.RSS, last.MaxMemory, last.HostMemory
	}
	return s
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// BaselineOf sums the baseline's ticks up (expected: probe replies a second).
func BaselineOf(ticks []Tick, expected float64) Baseline {
	s := summarize(ticks, expected)
	b := Baseline{
		Ticks: len(ticks), ProbeP99Ms: s.probeP99Ms, ServerUsecPerCall: s.usecPerCall,
		CPU: s.cpu, CPUPerCommand: s.cpuPerCommand, CommandsPerSec: s.commands,
		ErrorsPerSec: s.errors, RejectedPerSec: s.rejected, EvictedPerSec: s.evicted,
		MaxMemory: s.maxMemory, HostMemory: s.hostMemory,
	}
	p99s := make([]float64, 0, len(ticks))
	for _, t := range ticks {
		if float64(t.ProbeRequests) >= expected*t.Seconds/2 {
			p99s = append(p99s, t.ProbeP99Ms)
		}
		b.UsedMemory = max(b.UsedMemory, t.UsedMemory)
		b.RSS = max(b.RSS, t.RSS)
	}
	b.ProbeP99Q3Ms = quantile(p99s, 0.75)
	return b
}

// quantile is v's q-quantile (nearest rank); 0 for none.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[min(len(v)-1, int(math.Ceil(q*float64(len(v))))-1)]
}

// Trip is a rule that tripped, with its evidence.
type Trip struct {
	Rule     string    `json:"rule"`
	Value    float64   `json:"value"`
	Limit    float64   `json:"limit"`
	Baseline float64   `json:"baseline"`
	Unit     string    `json:"unit"`
	Why      string    `json:"why"`
	At       time.Time `json:"at"`
}

func (t Trip) String() string {
	return fmt.Sprintf("%s: %s %s, over the limit %s (baseline %s): %s",
		t.Rule, fmtValue(t.Value), t.Unit, fmtValue(t.Limit), fmtValue(t.Baseline), t.Why)
}

func fmtValue(v float64) string {
	if math.IsInf(v, 1) {
		return "no answer"
	}
	return fmt.Sprintf("%.4g", v)
}

// rule is one check of a span against the baseline: the value it looks
// at, its limit, and whether it applies at all (a server without
// maxmemory has no used-memory limit).
type rule struct {
	name, unit, why string
	check           func(th Thresholds, b Baseline, s span) (value, limit, base float64, applies bool)
}

const mib = 1 << 20

// Rules are the guard's rules, in the order they are reported.
var rules = []rule{
	{"latency", "ms", "the probe's p99 (median of the span's seconds) rose past the limit (ratio × the baseline's upper quartile, and the baseline's median + floor)", func(th Thresholds, b Baseline, s span) (float64, float64, float64, bool) {
		limit := max(th.LatencyRatio*max(b.ProbeP99Q3Ms, b.ProbeP99Ms), b.ProbeP99Ms+ms(th.LatencyFloor))
		return s.probeP99Ms, limit, b.ProbeP99Ms, b.ProbeP99Ms > 0
	}},
	{"server-latency", "us/call", "the server's own time per call (commandstats) rose past the limit", func(th Thresholds, b Baseline, s span) (float64, float64, float64, bool) {
		floor := float64(th.ServerLatencyFloor) / float64(time.Microsecond)
		limit := max(th.ServerLatencyRatio*b.ServerUsecPerCall, b.ServerUsecPerCall+floor)
		return s.usecPerCall, limit, b.ServerUsecPerCall, b.ServerUsecPerCall > 0 && s.usecPerCall > 0
	}},
	{"errors", "/s", "error replies (errorstats) rose past the limit", func(th Thresholds, b Baseline, s span) (float64, float64, float64, bool) {
		return s.errors, th.ErrorsRatio*b.ErrorsPerSec + th.ErrorsFloor, b.ErrorsPerSec, true
	}},
	{"rejected-connections", "/s", "the server refused connections (maxclients) more often than before", func(th Thresholds, b Baseline, s span) (float64, float64, float64, bool) {
		return s.rejected, b.RejectedPerSec + th.RejectedFloor, b.RejectedPerSec, true
	}},
	{"evictions", "/s", "the server evicts keys faster than before", func(th Thresholds, b Baseline, s span) (float64, float64, float64, bool) {
		return s.evicted, th.EvictionsRatio*b.EvictedPerSec + th.EvictionsFloor, b.EvictedPerSec, true
	}},
	{"memory-host", "share", "the server's RSS reached the limit of the host's memory", func(th Thresholds, b Baseline, s span) (float64, float64, float64, bool) {
		if s.hostMemory <= 0 {
			return 0, 0, 0, false
		}
		base := float64(b.RSS) / float64(s.hostMemory)
		return float64(s.rss) / float64(s.hostMemory), th.MemoryMax, base, base < th.MemoryMax
	}},
	{"memory-maxmemory", "share", "used memory reached the limit of maxmemory", func(th Thresholds, b Baseline, s span) (float64, float64, float64, bool) {
		if s.maxMemory <= 0 {
			return 0, 0, 0, false
		}
		base := 0.0 // a baseline without maxmemory was under any limit
		if b.MaxMemory > 0 {
			base = float64(b.UsedMemory) / float64(b.MaxMemory)
		}
		return float64(s.usedMemory) / float64(s.maxMemory), th.MemoryMax, base, base < th.MemoryMax
	}},
	{"rss-growth", "MiB", "the server's RSS grew past the limit (transparent huge pages, a larger buffer)", func(th Thresholds, b Baseline, s span) (float64, float64, float64, bool) {
		base := float64(b.RSS) / mib
		return float64(s.rss) / mib, max(th.RSSGrowth*base, base+64), base, b.RSS > 0
	}},
	{"cpu", "ms/kcmd", "the server spends more CPU per command (and at least the floor more CPU)", func(th Thresholds, b Baseline, s span) (float64, float64, float64, bool) {
		up := s.cpu >= b.CPU+th.CPUFloor
		return s.cpuPerCommand * 1e6, th.CPURatio * b.CPUPerCommand * 1e6, b.CPUPerCommand * 1e6, up && b.CPUPerCommand > 0
	}},
	{"ops-drop", "/s", "the server's command rate collapsed", func(th Thresholds, b Baseline, s span) (float64, float64, float64, bool) {
		// a fall trips: value and limit are negated so "over" means worse
		return -s.commands, -th.OpsDrop * b.CommandsPerSec, -b.CommandsPerSec, th.OpsDrop > 0 && b.CommandsPerSec >= th.OpsMin
	}},
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// RuleNames lists the rules in the order they are checked.
func RuleNames() []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.name
	}
	return out
}

// Judge applies the rules tick by tick.
type Judge struct {
	th       Thresholds
	base     Baseline
	expected float64
	ticks    []Tick
	streak   map[string]int
	// Last are the values of the last evaluation, by rule (for metrics).
	Last map[string]Trip
}

// NewJudge judges ticks against base; expected is the probe's replies a
// second.
func NewJudge(th Thresholds, base Baseline, expected float64) *Judge {
	return &Judge{th: th, base: base, expected: expected, streak: map[string]int{}, Last: map[string]Trip{}}
}

// Add takes one tick and returns the rules that trip with it.
func (j *Judge) Add(t Tick, at time.Time) []Trip {
	j.ticks = append(j.ticks, t)
	if len(j.ticks) > j.th.Span {
		j.ticks = j.ticks[len(j.ticks)-j.th.Span:]
	}
	if len(j.ticks) < j.th.Span {
		return nil
	}
	s := summarize(j.ticks, j.expected)
	var trips []Trip
	for _, r := range rules {
		v, limit, base, applies := r.check(j.th, j.base, s)
		tr := Trip{Rule: r.name, Value: v, Limit: limit, Baseline: base, Unit: r.unit, Why: r.why, At: at}
		if r.name == "ops-drop" {
			tr.Value, tr.Limit, tr.Baseline = -v, -limit, -base
		}
		j.Last[r.name] = tr
		if !applies || !(v > limit) {
			j.streak[r.name] = 0
			continue
		}
		j.streak[r.name]++
		if j.streak[r.name] >= j.th.Confirm {
			trips = append(trips, tr)
		}
	}
	return trips
}
