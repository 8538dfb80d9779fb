package steer

import (
	"runtime"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are steer's Prometheus metrics, updated from each period's
// Report.
type Metrics struct {
	packets    *prometheus.CounterVec
	received   *prometheus.CounterVec
	queueCPU   *prometheus.GaugeVec
	moves      *prometheus.CounterVec
	drifts     *prometheus.CounterVec
	samplerCPU prometheus.Counter
	events     prometheus.Counter
	lost       prometheus.Counter
	periods    prometheus.Counter
	dryRun     prometheus.Gauge
	build      *prometheus.GaugeVec
	last       SamplerStats
}

// NewMetrics registers steer's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	q := []string{"dev", "queue"}
	qi := []string{"dev", "queue", "irq"}
	m := &Metrics{
		packets: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "redline_steer_queue_packets_total",
			Help: "Packets of a receive queue copied to user space, by the NUMA node of the consuming CPU."}, append(q, "node")),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "redline_steer_queue_received_total",
			Help: "Packets a receive queue passed to GRO (napi_gro_receive_entry)."}, q),
		queueCPU: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "redline_steer_queue_irq_cpu",
			Help: "The CPU a queue's IRQ is delivered on (effective affinity; the lowest when several)."}, qi),
		moves: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "redline_steer_moves_total",
			Help: "IRQ moves steer made (or, in dry-run, would have made)."}, qi),
		drifts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "redline_steer_drift_total",
			Help: "IRQs changed by someone else after steer wrote them (left alone)."}, qi),
		samplerCPU: prometheus.NewCounter(prometheus.CounterOpts{Name: "redline_steer_sampler_cpu_seconds_total",
			Help: "CPU time of the thread reading the tracepoint rings."}),
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "redline_steer_sampler_events_total",
			Help: "Tracepoint samples decoded."}),
		lost: prometheus.NewCounter(prometheus.CounterOpts{Name: "redline_steer_sampler_lost_total",
			Help: "Tracepoint samples the kernel dropped (ring buffer full)."}),
		periods: prometheus.NewCounter(prometheus.CounterOpts{Name: "redline_steer_periods_total",
			Help: "Decision periods run."}),
		dryRun: prometheus.NewGauge(prometheus.GaugeOpts{Name: "redline_steer_dry_run",
			Help: "1 when steer only says what it would move (dry-run), 0 when it moves IRQs: a dashboard's moves mean different things."}),
		build: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "redline_build_info",
			Help: "Always 1; the labels say which redline runs (as Prometheus's own *_build_info)."}, []string{"version", "goversion"}),
	}
	reg.MustRegister(m.packets, m.received, m.queueCPU, m.moves, m.drifts, m.samplerCPU, m.events, m.lost, m.periods, m.dryRun, m.build)
	return m
}

// SetBuild exports redline_build_info for this redline's version.
func (m *Metrics) SetBuild(version string) {
	m.build.WithLabelValues(version, runtime.Version()).Set(1)
}

// SetDryRun exports whether steer only reports its moves.
func (m *Metrics) SetDryRun(dry bool) {
	m.dryRun.Set(map[bool]float64{true: 1}[dry])
}

// Start exports every labelled counter at zero for the queues and
// domains known when steer starts, as Prometheus asks of counters whose
// labels are known in advance: a rate() or increase() over a counter that
// appears only at its first event misses that event, and a dashboard
// cannot tell "no moves" from "no steer". Queues found later appear at
// their first event.
func (m *Metrics) Start(irqs []QueueIRQ, topo Topology) {
	domains := map[int]bool{}
	for _, c := range topo.CPUs {
		domains[c.Node] = true
	}
	for _, q := range irqs {
		dev, queue := q.Queue.Dev, strconv.Itoa(q.Queue.Queue)
		m.received.WithLabelValues(dev, queue)
		for d := range domains {
			m.packets.WithLabelValues(dev, queue, strconv.Itoa(d))
		}
		m.moves.WithLabelValues(qiLabels(q.Queue, q.IRQ)...)
		m.drifts.WithLabelValues(qiLabels(q.Queue, q.IRQ)...)
	}
}

// Observe adds one period.
func (m *Metrics) Observe(r *Report) {
	m.periods.Inc()
	m.SetDryRun(r.DryRun)
	for _, qs := range r.Decision.Queues {
		for node, n := range qs.PerNode {
			m.packets.WithLabelValues(qs.Queue.Dev, strconv.Itoa(qs.Queue.Queue), strconv.Itoa(node)).Add(float64(n))
		}
	}
	for k, qc := range r.Period.Queues {
		m.received.WithLabelValues(k.Dev, strconv.Itoa(k.Queue)).Add(float64(qc.Received))
	}
	for _, q := range r.IRQs {
		if on := q.on(); !on.IsEmpty() {
			m.queueCPU.WithLabelValues(qiLabels(q.Queue, q.IRQ)...).Set(float64(on.CPUs()[0]))
		}
	}
	moves := r.Applied
	if r.DryRun {
		moves = r.Decision.Moves
	}
	for _, mv := range moves {
		m.moves.WithLabelValues(qiLabels(mv.Queue, mv.IRQ)...).Inc()
	}
	for _, d := range r.Decision.Drifts {
		m.drifts.WithLabelValues(qiLabels(d.Queue, d.IRQ)...).Inc()
	}
	s := r.Sampler
	m.samplerCPU.Add((s.CPU - m.last.CPU).Seconds())
	m.events.Add(float64(s.Events - m.last.Events))
	m.lost.Add(float64(s.Lost - m.last.Lost))
	m.last = s
}

func qiLabels(k QueueKey, irq int) []string {
	return []string{k.Dev, strconv.Itoa(k.Queue), strconv.Itoa(irq)}
}
