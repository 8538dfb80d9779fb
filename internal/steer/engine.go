package steer

import (
	"fmt"
	"sort"

	"redline/internal/host"
)

// Topology is what the engine needs to know of the CPUs.
type Topology struct {
	CPUs []TopoCPU `json:"cpus"` // online CPUs
	// Domain says what TopoCPU.Node numbers: DomainNode ("" too) or
	// DomainLLC.
	Domain string `json:"domain,omitempty"`
}

// Domains counts the distinct domains.
func (t Topology) Domains() int {
	seen := map[int]bool{}
	for _, c := range t.CPUs {
		seen[c.Node] = true
	}
	return len(seen)
}

// domainWord names a domain in reasons ("node 1", "LLC 6").
func (t Topology) domainWord() string {
	if t.Domain == DomainLLC {
		return "LLC"
	}
	return "node"
}

// TopoCPU is one online CPU.
type TopoCPU struct {
	ID int `json:"id"`
	// Node is the CPU's domain: its NUMA node (0 when the machine has no
	// NUMA information), or with DomainLLC the lowest CPU sharing its
	// last-level cache.
	Node int `json:"node"`
	// Core is the lowest CPU of its core's hardware threads (itself
	// without SMT): CPUs with the same Core share a physical core.
	Core int `json:"core"`
}

// QueueIRQ is the IRQ serving one receive queue, as read this period.
type QueueIRQ struct {
	Queue    QueueKey    `json:"queue"`
	IRQ      int         `json:"irq"`
	Affinity host.CPUSet `json:"affinity"` // smp_affinity_list
	// Effective is effective_affinity_list, where the kernel delivers
	// (one CPU of Affinity on x86); nil when the kernel does not say.
	Effective *host.CPUSet `json:"effective,omitempty"`
}

// on returns the CPUs the IRQ is delivered on.
func (q QueueIRQ) on() host.CPUSet {
	if q.Effective != nil && !q.Effective.IsEmpty() {
		return *q.Effective
	}
	return q.Affinity
}

// Input is one period's evidence.
type Input struct {
	Period   *Period
	Topology Topology
	IRQs     []QueueIRQ
	// RedisCPUs are the CPUs of the target's main and io threads; their
	// cores take a queue IRQ only when nothing else is left.
	RedisCPUs host.CPUSet
	// Busy is each CPU's busy fraction over the period (0..1, missing
	// means idle); the idlest candidate wins a tie.
	Busy map[int]float64
}

// Options tune the Engine.
type Options struct {
	// MinPackets is the number of matched packets in a period that makes
	// a queue busy enough to judge.
	MinPackets uint64
	// Majority is the share of a queue's packets one node must consume
	// for it to be the preferred node.
	Majority float64
	// Periods is how many consecutive periods the same node must hold
	// the majority before the IRQ moves (hysteresis).
	Periods int
}

// Defaults for Options.
const (
	DefaultMinPackets = 100
	DefaultMajority   = 0.6
	DefaultPeriods    = 2
)

func (o Options) withDefaults() Options {
	if o.MinPackets == 0 {
		o.MinPackets = DefaultMinPackets
	}
	if o.Majority <= 0 || o.Majority > 1 {
		o.Majority = DefaultMajority
	}
	if o.Periods <= 0 {
		o.Periods = DefaultPeriods
	}
	return o
}

// Move is one IRQ affinity change the engine wants.
type Move struct {
	IRQ    int         `json:"irq"`
	Queue  QueueKey    `json:"queue"`
	From   host.CPUSet `json:"from"`
	To     int         `json:"to"`
	Node   int         `json:"node"`
	Reason string      `json:"reason"`
}

// Drift is an IRQ whose affinity changed after steer wrote it: an admin
// or irqbalance moved it. Steer leaves it alone from then on.
type Drift struct {
	IRQ   int         `json:"irq"`
	Queue QueueKey    `json:"queue"`
	Wrote host.CPUSet `json:"wrote"`
	Now   host.CPUSet `json:"now"`
}

// QueueState is one queue's view after a period, for logs and status.
type QueueState struct {
	Queue     QueueKey       `json:"queue"`
	IRQ       int            `json:"irq"`
	On        host.CPUSet    `json:"on"`
	Matched   uint64         `json:"matched"`
	PerNode   map[int]uint64 `json:"per_node"`
	Preferred *int           `json:"preferred,omitempty"` // nil: no clear majority or too quiet
	Streak    int            `json:"streak"`
	Drifted   bool           `json:"drifted,omitempty"`
}

// Decision is what a period produced.
type Decision struct {
	Moves  []Move       `json:"moves"`
	Drifts []Drift      `json:"drifts,omitempty"` // newly seen this period
	Queues []QueueState `json:"queues"`
}

// Engine decides IRQ moves period after period. It remembers per IRQ the
// node that held the majority and for how long, and what it wrote.
type Engine struct {
	o     Options
	state map[int]*irqState
}

type irqState struct {
	node   int
	streak int
	// onRedis counts consecutive periods the IRQ sat on a Redis core
	// (an unpinned redis-server wanders; one period proves nothing).
	onRedis int
	wrote   *host.CPUSet
	drifted bool
	held    bool
}

// NewEngine returns an Engine with o's zero fields defaulted.
func NewEngine(o Options) *Engine {
	return &Engine{o: o.withDefaults(), state: map[int]*irqState{}}
}

// Applied tells the engine a move was written and read back; drift is
// judged against it from the next period on.
func (e *Engine) Applied(m Move) {
	set := host.NewCPUSet(m.To)
	e.st(m.IRQ).wrote = &set
}

// Hold makes the engine leave irq alone from now on (its affinity could
// not be written: a kernel-managed IRQ, a refusal).
func (e *Engine) Hold(irq int) { e.st(irq).held = true }

func (e *Engine) st(irq int) *irqState {
	s := e.state[irq]
	if s == nil {
		s = &irqState{node: -1}
		e.state[irq] = s
	}
	return s
}

// Step judges one period.
func (e *Engine) Step(in Input) Decision {
	var d Decision
	topo := newTopoIndex(in.Topology, in.RedisCPUs)
	claims := newClaims(topo)
	var want []wanted
	for _, q := range in.IRQs {
		qs, w, drift := e.judge(q, in, topo)
		if drift != nil {
			d.Drifts = append(d.Drifts, *drift)
		}
		if w != nil {
			want = append(want, *w)
		} else {
			claims.take(q.on())
		}
		d.Queues = append(d.Queues, qs)
	}
	// The busiest queue picks first.
	sort.SliceStable(want, func(i, j int) bool { return want[i].matched > want[j].matched })
	for _, w := range want {
		m, ok := claims.place(w, in.Busy)
		if !ok {
			claims.take(w.q.on())
			continue
		}
		d.Moves = append(d.Moves, m)
	}
	return d
}

// wanted is a queue whose IRQ should be (re)placed on a node.
type wanted struct {
	q       QueueIRQ
	node    int
	matched uint64
	why     string
}

// judge updates one IRQ's hysteresis and says whether it wants a place.
func (e *Engine) judge(q QueueIRQ, in Input, topo topoIndex) (QueueState, *wanted, *Drift) {
	s := e.st(q.IRQ)
	qs := QueueState{Queue: q.Queue, IRQ: q.IRQ, On: q.on()}
	var drift *Drift
	if s.wrote != nil && !s.drifted && !q.Affinity.Equal(*s.wrote) {
		s.drifted = true
		drift = &Drift{IRQ: q.IRQ, Queue: q.Queue, Wrote: *s.wrote, Now: q.Affinity}
	}
	qs.Drifted = s.drifted
	var qc *QueueCounts
	if in.Period != nil {
		qc = in.Period.Queues[q.Queue]
	}
	node, share, matched, perNode := preferred(qc, topo)
	qs.Matched, qs.PerNode = matched, perNode
	switch {
	case matched < e.o.MinPackets || share < e.o.Majority:
		s.node, s.streak = -1, 0
	case node == s.node:
		s.streak++
	default:
		s.node, s.streak = node, 1
	}
	qs.Streak = s.streak
	if topo.onRedisCore(q.on()) {
		s.onRedis++
	} else {
		s.onRedis = 0
	}
	if s.streak > 0 {
		n := s.node
		qs.Preferred = &n
	}
	if s.drifted || s.held || s.streak < e.o.Periods {
		return qs, nil, drift
	}
	why, redisOnly := topo.misplaced(q.on(), s.node)
	if why == "" || (redisOnly && s.onRedis < e.o.Periods) {
		return qs, nil, drift
	}
	reason := fmt.Sprintf("%.0f%% of %d packets consumed on %s %d for %s; %s",
		100*share, matched, in.Topology.domainWord(), s.node, plural(s.streak, "period"), why)
	return qs, &wanted{q: q, node: s.node, matched: matched, why: reason}, drift
}

// preferred returns the node consuming most of a queue's packets, its
// share, the matched total and the per-node counts.
func preferred(qc *QueueCounts, topo topoIndex) (node int, share float64, matched uint64, perNode map[int]uint64) {
	perNode = map[int]uint64{}
	if qc == nil {
		return -1, 0, 0, perNode
	}
	for cpu, n := range qc.Consumers {
		if c, ok := topo.cpu[cpu]; ok {
			perNode[c.Node] += n
			matched += n
		}
	}
	node = -1
	for nd, n := range perNode {
		if node < 0 || n > perNode[node] || (n == perNode[node] && nd < node) {
			node = nd
		}
	}
	if matched > 0 {
		share = float64(perNode[node]) / float64(matched)
	}
	return node, share, matched, perNode
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
