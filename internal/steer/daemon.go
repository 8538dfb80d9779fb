package steer

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"redline/internal/host"
)

// Config is what Run needs besides the sampler.
type Config struct {
	Period time.Duration // default DefaultPeriod
	Engine Options
	// Domain is what a queue's IRQ is kept in: DomainNode (default) or
	// DomainLLC.
	Domain string
	// PIDs are the redis-server processes whose consumption counts and
	// whose main/io threads' cores are kept free; empty means every
	// consuming thread counts and the snapshot's Redis processes' cores
	// are kept free.
	PIDs []int
	// Read reads the whole host (topology, NICs, queue IRQs, Redis
	// threads); it runs at start and every Refresh periods.
	Read    func() (*host.Snapshot, error)
	Refresh int // default DefaultRefresh
	// ReadFile reads a live /proc file (the queue IRQs' affinities, every
	// period).
	ReadFile func(path string) ([]byte, error)
	// Drivers names the drivers of devices the snapshot does not see
	// (those of other network namespaces, NamespaceDrivers), so their
	// queues are numbered right.
	Drivers map[string]string
	// Targets, when set, finds the processes to steer for in a fresh
	// snapshot (those listening on the user's ports): when the target
	// restarts (a new pid on the same port) steer follows it. It is asked
	// at every refresh, and every period while a target's pid is gone.
	Targets func(*host.Snapshot) ([]int, error)
	// NewSource makes a source whose kernel filter keeps the copies of
	// these threads (a perf tracepoint takes one filter for its life), to
	// replace the running one when the target changes; Run closes the
	// sources it made. Nil: only the Joiner's target changes.
	NewSource func(tids []int) (Source, error)
	// Actuator makes the moves; nil is a dry run.
	Actuator Actuator
	// OnPeriod receives each period's report (log line, metrics, status).
	OnPeriod func(*Report)
}

// Defaults for Config.
const (
	DefaultPeriod  = time.Second
	DefaultRefresh = 10
)

// Report is what one period saw and did.
type Report struct {
	Time time.Time `json:"time"`
	// Targets are the pids steered for (none: every consumer).
	Targets []int `json:"targets,omitempty"`
	// Domain is what the per-queue counts are grouped by: "" or "node"
	// (NUMA node), "llc" (last-level cache).
	Domain   string       `json:"domain,omitempty"`
	Period   *Period      `json:"period"`
	Decision Decision     `json:"decision"`
	Applied  []Move       `json:"applied,omitempty"`
	NotDone  []string     `json:"not_done,omitempty"`
	DryRun   bool         `json:"dry_run"`
	Sampler  SamplerStats `json:"sampler"`
	// SamplerCPU is the sampler thread's CPU over the period, as a
	// fraction of one CPU.
	SamplerCPU float64    `json:"sampler_cpu"`
	IRQs       []QueueIRQ `json:"irqs"`
}

// Line is the one-line log of a period.
func (r *Report) Line() string {
	var b strings.Builder
	var matched, received uint64
	for _, q := range r.Period.Queues {
		matched += q.Matched
		received += q.Received
	}
	fmt.Fprintf(&b, "%s queues=%d rx=%d matched=%d unmatched=%d lost=%d sampler_cpu=%.2f%%", r.Time.Format("15:04:05"),
		len(r.Period.Queues), received, matched, r.Period.Unmatched, r.Period.Lost, 100*r.SamplerCPU)
	verb := "moved"
	if r.DryRun {
		verb = "would move"
	}
	moves := r.Applied
	if r.DryRun {
		moves = r.Decision.Moves
	}
	for _, m := range moves {
		fmt.Fprintf(&b, "; %s irq %d (%s rx-%d) %s -> %d: %s", verb, m.IRQ, m.Queue.Dev, m.Queue.Queue, m.From.List(), m.To, m.Reason)
	}
	for _, d := range r.Decision.Drifts {
		fmt.Fprintf(&b, "; drift irq %d (%s rx-%d): steer wrote %s, now %s; left alone", d.IRQ, d.Queue.Dev, d.Queue.Queue, d.Wrote.List(), d.Now.List())
	}
	for _, s := range r.NotDone {
		b.WriteString("; " + s)
	}
	return b.String()
}

// Source produces a Period every period: the Sampler, or a test's
// recording.
type Source interface {
	Run(ctx context.Context, period time.Duration, out chan<- *Period) error
	Stats() SamplerStats
	// Configure sets which processes' copies count (nil: all) and which
	// devices number their queues from 0.
	Configure(target map[uint32]bool, zeroBased func(dev string) bool)
}

// Configure implements Source. It may be called while Run runs (a
// retarget): the reading loop applies it before its next batch, so the
// Joiner is only ever touched by that loop.
func (s *Sampler) Configure(target map[uint32]bool, zeroBased func(dev string) bool) {
	s.cfgMu.Lock()
	s.pending = &joinConfig{target: target, zeroBased: zeroBased}
	s.cfgMu.Unlock()
}

// Run samples, decides and (unless dry) moves every period until ctx
// ends. It does not restore: the caller calls Actuator.Restore, also
// when Run fails.
func Run(ctx context.Context, s Source, c Config) error {
	c = c.withDefaults()
	snap, err := c.Read()
	if err != nil {
		return err
	}
	if _, err := TopologyIn(snap, c.Domain); err != nil {
		return err
	}
	st := newRunState(snap, c)
	drivers := DriversOf(snap)
	for dev, d := range c.Drivers {
		if drivers[dev] == "" { // not in the snapshot, or without a device link there (veth)
			drivers[dev] = d
		}
	}
	f := &feed{zeroBased: DriverQueues(drivers), period: c.Period}
	f.start(ctx, s, st.pids, false)
	defer f.stop()
	engine := NewEngine(c.Engine)
	lastCPU := f.stats().CPU
	for n := 1; ; n++ {
		var p *Period
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-f.errc:
			f.errc <- err
			return err
		case p = <-f.periods:
		}
		var notes []string
		if n%c.Refresh == 0 || st.targetGone(c.ReadFile) {
			st.refresh(c)
			notes = st.retarget(ctx, c, f)
		}
		r := &Report{Time: time.Now(), Period: p, DryRun: c.Actuator == nil, Sampler: f.stats(), Targets: st.pids, NotDone: notes, Domain: c.Domain}
		r.SamplerCPU = float64(r.Sampler.CPU-lastCPU) / float64(c.Period)
		lastCPU = r.Sampler.CPU
		r.IRQs = st.irqsNow(c.ReadFile)
		r.Decision = engine.Step(Input{Period: p, Topology: st.topo, IRQs: r.IRQs, RedisCPUs: st.redis, Busy: st.busy})
		if c.Actuator != nil {
			st.actuate(ctx, c.Actuator, engine, r)
		}
		if c.OnPeriod != nil {
			c.OnPeriod(r)
		}
	}
}

func (c Config) withDefaults() Config {
	if c.Period <= 0 {
		c.Period = DefaultPeriod
	}
	if c.Refresh <= 0 {
		c.Refresh = DefaultRefresh
	}
	return c
}

// runState is the host as of the last full read.
type runState struct {
	topo  Topology
	irqs  []QueueIRQ
	redis host.CPUSet
	busy  map[int]float64
	times []host.CPUTime
	pids  []int // the processes steered for (Config.PIDs, then Targets')
	snap  *host.Snapshot
	// missing is the last retarget failure, said once.
	missing string
}

func newRunState(snap *host.Snapshot, c Config) *runState {
	st := &runState{pids: c.PIDs}
	st.use(snap, c)
	return st
}

func (st *runState) use(snap *host.Snapshot, c Config) {
	if topo, err := TopologyIn(snap, c.Domain); err == nil { // checked at start: a refresh keeps the last one
		st.topo = topo
	}
	st.irqs, st.redis, st.snap = QueueIRQsOf(snap), RedisCPUsOf(snap, st.pids), snap
	if st.times != nil {
		st.busy = busyBetween(st.times, snap.CPU.Times)
	}
	st.times = snap.CPU.Times
}

// refresh re-reads the host; a failed read keeps the last one.
func (st *runState) refresh(c Config) {
	if snap, err := c.Read(); err == nil {
		st.use(snap, c)
	}
}

// TargetThreads lists the threads of the given processes, for
// SamplerOptions.Consumers.
func TargetThreads(snap *host.Snapshot, pids []int) ([]int, error) {
	var tids []int
	for _, pid := range pids {
		p := snap.Process(pid)
		if p == nil {
			return nil, fmt.Errorf("redis-server pid %d not found", pid)
		}
		for _, th := range p.Threads {
			tids = append(tids, th.TID)
		}
	}
	return tids, nil
}

// busyBetween is each CPU's busy fraction between two /proc/stat reads.
func busyBetween(a, b []host.CPUTime) map[int]float64 {
	prev := map[int]host.CPUTime{}
	for _, t := range a {
		prev[t.CPU] = t
	}
	out := map[int]float64{}
	for _, t := range b {
		p, ok := prev[t.CPU]
		if !ok {
			continue
		}
		total := float64(t.Total() - p.Total())
		idle := float64(t.Idle + t.IOWait - p.Idle - p.IOWait)
		if total > 0 {
			out[t.CPU] = 1 - idle/total
		}
	}
	return out
}

// irqsNow reads the queue IRQs' live affinities; an IRQ whose affinity
// cannot be read keeps its last known one, and one whose effective
// affinity cannot be read has none (a stale one would hide a move).
func (st *runState) irqsNow(readFile func(string) ([]byte, error)) []QueueIRQ {
	out := make([]QueueIRQ, len(st.irqs))
	copy(out, st.irqs)
	if readFile == nil {
		return out
	}
	for i := range out {
		dir := "/proc/irq/" + strconv.Itoa(out[i].IRQ) + "/"
		if set, ok := readCPUList(readFile, dir+"smp_affinity_list"); ok {
			out[i].Affinity = set
		}
		out[i].Effective = nil
		if set, ok := readCPUList(readFile, dir+"effective_affinity_list"); ok {
			out[i].Effective = &set
		}
	}
	st.irqs = out
	return out
}

func readCPUList(readFile func(string) ([]byte, error), path string) (host.CPUSet, bool) {
	b, err := readFile(path)
	if err != nil {
		return host.CPUSet{}, false
	}
	set, err := host.ParseCPUList(strings.TrimSpace(string(b)))
	return set, err == nil
}

// actuate applies the period's moves and tells the engine what stuck.
func (st *runState) actuate(ctx context.Context, a Actuator, e *Engine, r *Report) {
	done, notDone, err := a.Apply(ctx, r.Decision.Moves)
	if err != nil {
		r.NotDone = append(r.NotDone, err.Error())
		return
	}
	for _, m := range done {
		e.Applied(m)
	}
	r.Applied = done
	for irq, why := range notDone {
		e.Hold(irq)
		r.NotDone = append(r.NotDone, fmt.Sprintf("irq %d not moved (%s); left alone from now on", irq, why))
	}
}
