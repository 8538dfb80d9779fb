package guard

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the guard's Prometheus metrics, updated each tick.
type Metrics struct {
	phase     *prometheus.GaugeVec
	value     *prometheus.GaugeVec
	limit     *prometheus.GaugeVec
	tripped   *prometheus.GaugeVec
	rollbacks prometheus.Counter
	remaining prometheus.Gauge
	probeP99  prometheus.Gauge
	probeReqs prometheus.Counter
}

// Phases lists every phase, for the phase gauge.
var Phases = []string{PhaseBaseline, PhaseApplying, PhaseWatching, PhaseKept, PhaseRolledBack, PhaseAbandoned, PhaseFailed}

// NewMetrics registers the guard's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		phase: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "redline_guard_phase",
			Help: "1 for the phase the guard is in (baseline, applying, watching, kept, rolled-back, abandoned, failed), 0 for the others."}, []string{"phase"}),
		value: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "redline_guard_rule_value",
			Help: "What each rule read over its last span (unit in the rule's docs: latency ms, server-latency us/call, rates /s, memory shares, rss MiB, cpu ms per 1000 commands)."}, []string{"rule"}),
		limit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "redline_guard_rule_limit",
			Help: "The value past which each rule trips, from the baseline and the thresholds."}, []string{"rule"}),
		tripped: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "redline_guard_tripped",
			Help: "1 when the rule tripped and the guard rolled the change back."}, []string{"rule"}),
		rollbacks: prometheus.NewCounter(prometheus.CounterOpts{Name: "redline_guard_rollbacks_total",
			Help: "Changes the guard rolled back."}),
		remaining: prometheus.NewGauge(prometheus.GaugeOpts{Name: "redline_guard_watch_remaining_seconds",
			Help: "Time left in the phase (baseline or watch)."}),
		probeP99: prometheus.NewGauge(prometheus.GaugeOpts{Name: "redline_guard_probe_p99_seconds",
			Help: "The probe's p99 in the last tick, from intended send times."}),
		probeReqs: prometheus.NewCounter(prometheus.CounterOpts{Name: "redline_guard_probe_requests_total",
			Help: "Probe replies (the guard's own load on the server)."}),
	}
	reg.MustRegister(m.phase, m.value, m.limit, m.tripped, m.rollbacks, m.remaining, m.probeP99, m.probeReqs)
	for _, r := range rules {
		m.tripped.WithLabelValues(r.name).Set(0)
	}
	return m
}

// SetPhase marks the phase the guard is in.
func (m *Metrics) SetPhase(phase string) {
	for _, p := range Phases {
		v := 0.0
		if p == phase {
			v = 1
		}
		m.phase.WithLabelValues(p).Set(v)
	}
}

// Observe takes one tick's event.
func (m *Metrics) Observe(e Event) {
	m.SetPhase(e.Phase)
	m.remaining.Set(max(e.Remaining.Seconds(), 0))
	m.probeP99.Set(e.Tick.ProbeP99Ms / 1e3)
	m.probeReqs.Add(float64(e.Tick.ProbeRequests))
	if e.Judge == nil {
		return
	}
	for name, tr := range e.Judge.Last {
		m.value.WithLabelValues(name).Set(tr.Value)
		m.limit.WithLabelValues(name).Set(tr.Limit)
	}
}

// End records how the guard ended.
func (m *Metrics) End(v *Verdict) {
	if v == nil || v.State == nil {
		return
	}
	m.SetPhase(v.State.Phase)
	m.remaining.Set(0)
	for _, tr := range v.Trips {
		m.tripped.WithLabelValues(tr.Rule).Set(1)
	}
	if v.State.Phase == PhaseRolledBack {
		m.rollbacks.Inc()
	}
}
