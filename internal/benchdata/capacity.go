package benchdata

import "sort"

// Capacity is what a capacity search (bench --slo) found: the highest
// offered rate, open loop and timed from intended send times, at which
// every latency target held and the achieved rate kept up with the
// offered one, with its interval and every step it measured (the
// throughput-latency curve). The Summary that carries it holds, in its
// own fields, the step that passed at the highest rate not above the
// capacity (the load the answer describes).
type Capacity struct {
	// Targets are the latency targets, all of which must hold.
	Targets []SLOTarget `json:"targets"`
	// Found is false when no step held the targets (then RPS and the
	// interval are 0 and Note says why).
	Found bool `json:"found"`
	// RPS is the capacity: the offered rate at which a step holds the
	// targets half the time (the posterior median of the search's
	// model, docs/bench.md). Low..High is its credible interval at
	// Level (0.95).
	RPS   float64 `json:"rps"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	Level float64 `json:"level"`
	// Steps counts the open-loop steps measured, StepSeconds the length
	// of each (measured part), Seconds the search's wall time.
	Steps       int     `json:"steps"`
	StepSeconds float64 `json:"step_seconds"`
	Seconds     float64 `json:"seconds"`
	// BudgetSeconds is the time budget; Exhausted is true when the search
	// stopped at it before the interval was as narrow as asked.
	BudgetSeconds float64 `json:"budget_seconds"`
	Exhausted     bool    `json:"budget_exhausted,omitempty"`
	// Precision is the interval's asked-for half-width, relative (0.02:
	// High/Low within 1.04).
	Precision float64 `json:"precision"`
	// KeepUp is the least achieved/offered ratio a step needs; MaxErrors
	// the largest fraction of failed requests.
	KeepUp    float64 `json:"keep_up"`
	MaxErrors float64 `json:"max_errors"`
	// ProbeRPS is the closed-loop throughput of the first, short probe
	// (same clients and pipeline), which set the search's range.
	ProbeRPS float64 `json:"probe_rps,omitempty"`
	// Curve is every step in the order measured.
	Curve []CurveStep `json:"curve"`
	Note  string      `json:"note,omitempty"`
}

// SLOTarget is one latency target: the Percentile (99 for p99) at most
// TargetMS milliseconds.
type SLOTarget struct {
	Percentile float64 `json:"percentile"`
	TargetMS   float64 `json:"target_ms"`
	Name       string  `json:"name"` // as given: "p99"
}

// CurveStep is one step of a capacity search: the load offered, what
// came back, and whether the targets held.
type CurveStep struct {
	Seq         int     `json:"seq"`
	OfferedRPS  float64 `json:"offered_rps"`
	AchievedRPS float64 `json:"achieved_rps"`
	Requests    int64   `json:"requests"`
	Errors      int64   `json:"errors"`
	Latency     Latency `json:"latency_ms"`
	// Percentiles are the targets' percentiles measured, in ms, in the
	// order of Capacity.Targets.
	Percentiles []float64 `json:"target_percentiles_ms"`
	// Backlog is what was due and not answered when the step's duration
	// ended (late to send, or outstanding).
	Backlog int64 `json:"backlog"`
	Holds   bool  `json:"holds"`
	// Why says what failed when Holds is false: "p99 3.1ms > 1ms",
	// "achieved 91% of offered", "errors 0.2%", or the error.
	Why       string     `json:"why,omitempty"`
	Histogram *Histogram `json:"histogram,omitempty"`
}

// ByRate returns the curve's steps ordered by offered rate (ties in the
// order measured).
func (c *Capacity) ByRate() []CurveStep {
	steps := append([]CurveStep(nil), c.Curve...)
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].OfferedRPS < steps[j].OfferedRPS })
	return steps
}

// Percentile is a step's latency at a named percentile in ms: a
// target's as measured, else p50, p99 or p99.9 from the digest; 0 when
// not recorded.
func (c *Capacity) Percentile(cs CurveStep, name string) float64 {
	for i, t := range c.Targets {
		if t.Name == name && i < len(cs.Percentiles) {
			return cs.Percentiles[i]
		}
	}
	switch name {
	case "p50":
		return cs.Latency.P50
	case "p99":
		return cs.Latency.P99
	case "p99.9":
		return cs.Latency.P999
	}
	return 0
}
