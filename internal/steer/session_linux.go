package steer

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"redline/internal/host"
	"redline/internal/tune"
)

// SessionOptions configure a Session: steer on the live host, for a
// while, inside another program (the lab).
type SessionOptions struct {
	Period time.Duration
	Engine Options
	Domain string // DomainNode (default) or DomainLLC
	Sample int
	// PIDs are the redis-servers to steer for (see Config.PIDs); their
	// threads are the only consumers the kernel reports.
	PIDs []int
	// Ports add the redis-servers listening there, and are followed: a
	// server restarted on one is steered for under its new pid
	// (redline steer -p).
	Ports  []int
	DryRun bool
	// NetNS are network namespaces whose devices' packets count too (the
	// lab's server namespace): their drivers are asked for at start.
	NetNS []string
	// StateDir is the tune journal the moves go through.
	StateDir string
	// OnPeriod, if set, also receives each period's report.
	OnPeriod func(*Report)
	// OnStart, if set, is given the host as read at the start and what
	// was done about an earlier steer's leftovers ("" when nothing),
	// before sampling begins.
	OnStart func(snap *host.Snapshot, recovered string)
	// System makes the machine the moves are written to (and an earlier
	// steer's leftovers restored on): tune.LiveSystem when nil. A session
	// rehearsing on a tree passes its own, so steer never writes the live
	// host there.
	System func() *tune.System
}

func (o SessionOptions) system() *tune.System {
	if o.System != nil {
		return o.System()
	}
	return tune.LiveSystem()
}

// Session is steer running in the background on the live host.
type Session struct {
	tfs     *Tracefs
	smp     *Sampler
	sys     *tune.System
	act     *TuneActuator
	cancel  context.CancelFunc
	done    chan struct{} // closed when Run has returned
	runErr  error
	started time.Time
	// irqbalance says what is done about a running irqbalance.
	irqbalance string

	mu  sync.Mutex
	rec SessionRecord
}

// SessionRecord is what a Session did, for the caller's records.
type SessionRecord struct {
	Started, Finished time.Time
	DryRun            bool
	Periods           int
	Moves             []TimedMove
	Drifts            []Drift
	NotDone           []string
	Last              *Report // the last period's report
	Sampler           SamplerStats
	// SamplerCPU is the sampler thread's CPU time over the session as a
	// fraction of one CPU.
	SamplerCPU float64
	// Queues are the session's totals per queue.
	Queues   map[QueueKey]*QueueCounts
	Restored string
	// Irqbalance says what steer did about a running irqbalance.
	Irqbalance string
	// RunError is why steering stopped early ("" when it ran until Stop).
	RunError string
}

// TimedMove is a move with when it was made.
type TimedMove struct {
	Time time.Time
	Move
}

// StartSession opens the tracepoints and starts steering (root needed).
func StartSession(ctx context.Context, o SessionOptions) (*Session, error) {
	fs, err := host.NewFS("/")
	if err != nil {
		return nil, err
	}
	read := func() (*host.Snapshot, error) { return host.Read(fs, host.Options{PIDs: o.PIDs, Ports: o.Ports}) }
	snap, err := read()
	if err != nil {
		return nil, err
	}
	pids, err := PIDsOnPorts(snap, o.PIDs, o.Ports)
	if err != nil {
		return nil, err
	}
	if _, err := TopologyIn(snap, o.Domain); err != nil {
		return nil, err
	}
	tids, err := TargetThreads(snap, pids)
	if err != nil {
		return nil, err
	}
	drivers := map[string]string{}
	for _, ns := range o.NetNS {
		d, err := NamespaceDrivers(ns)
		if err != nil {
			return nil, err
		}
		maps.Copy(drivers, d)
	}
	s := &Session{done: make(chan struct{}), started: time.Now()}
	recovered := ""
	if !o.DryRun {
		// What a steer killed earlier (kill -9 of a lab or of a remote
		// session) left journaled goes back first, its irqbalance bans
		// lifted, before this one records its own. The caller holds the
		// state directory (tune.HoldStateDir).
		sys := o.system()
		recovered, err = recoverEarlier(ctx, sys, o.StateDir)
		sys.Close()
		if err != nil {
			return nil, err
		}
	}
	if s.tfs, err = OpenTracefs(); err != nil {
		return nil, err
	}
	if s.smp, err = NewSampler(s.tfs, SamplerOptions{Sample: o.Sample, Consumers: tids}); err != nil {
		s.tfs.Close()
		return nil, err
	}
	cfg := Config{Period: o.Period, Engine: o.Engine, Domain: o.Domain, PIDs: pids, Read: read, ReadFile: fs.ReadFile, Drivers: drivers, OnPeriod: func(r *Report) {
		s.observe(r)
		if o.OnPeriod != nil {
			o.OnPeriod(r)
		}
	}}
	if !o.DryRun {
		s.sys = o.system()
		s.act = &TuneActuator{System: s.sys, StateDir: o.StateDir}
		if ib := IrqbalanceFor(snap, o.StateDir); ib != nil {
			s.act.Irqbalance = ib
			s.irqbalance = fmt.Sprintf("irqbalance (pid %d) runs: steer bans each IRQ it moves from irqbalance's balancing (its socket's settings ban irqs) and lifts those bans after the restore", ib.PID)
		}
		cfg.Actuator = s.act
	}
	s.rec = SessionRecord{Started: s.started, DryRun: o.DryRun, Irqbalance: s.irqbalance}
	if recovered != "" {
		s.rec.NotDone = append(s.rec.NotDone, recovered)
	}
	if len(o.Ports) > 0 { // follow a restarted redis-server to its new pid
		tfs := s.tfs
		cfg.Targets = func(snap *host.Snapshot) ([]int, error) { return PIDsOnPorts(snap, o.PIDs, o.Ports) }
		cfg.NewSource = func(tids []int) (Source, error) {
			return NewSampler(tfs, SamplerOptions{Sample: o.Sample, Consumers: tids})
		}
	}
	if o.OnStart != nil {
		o.OnStart(snap, recovered)
	}
	rctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	go func() {
		s.runErr = Run(rctx, s.smp, cfg)
		close(s.done)
	}()
	return s, nil
}

// Done is closed when steering has ended by itself (an error, or the
// context StartSession was given ending); Stop still restores.
func (s *Session) Done() <-chan struct{} { return s.done }

func (s *Session) observe(r *Report) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec.Periods++
	moves := r.Applied
	if r.DryRun {
		moves = r.Decision.Moves
	}
	for _, m := range moves {
		s.rec.Moves = append(s.rec.Moves, TimedMove{Time: r.Time, Move: m})
	}
	s.rec.Drifts = append(s.rec.Drifts, r.Decision.Drifts...)
	s.rec.NotDone = append(s.rec.NotDone, r.NotDone...)
	if s.rec.Queues == nil {
		s.rec.Queues = map[QueueKey]*QueueCounts{}
	}
	for k, q := range r.Period.Queues {
		t := s.rec.Queues[k]
		if t == nil {
			t = &QueueCounts{Consumers: map[int]uint64{}, SoftirqCPUs: map[int]uint64{}}
			s.rec.Queues[k] = t
		}
		t.add(q)
	}
	s.rec.Last = r
}

// Stop ends steering, restores every IRQ the session moved (leaving
// alone those someone else changed since) and returns the record.
func (s *Session) Stop(ctx context.Context) (SessionRecord, error) {
	s.cancel()
	<-s.done
	runErr := s.runErr
	s.mu.Lock()
	rec := s.rec // Run has returned: nothing writes it any more
	s.mu.Unlock()
	rec.Finished = time.Now()
	rec.Sampler = s.smp.Stats()
	if rec.Last != nil {
		rec.Sampler = rec.Last.Sampler
	}
	if took := rec.Finished.Sub(s.started); took > 0 {
		rec.SamplerCPU = rec.Sampler.CPU.Seconds() / took.Seconds()
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		rec.RunError = runErr.Error()
	}
	var err error
	if s.act != nil {
		rec.Restored, err = s.act.Restore(context.WithoutCancel(ctx))
		if err != nil {
			err = fmt.Errorf("restore: %w", err)
		}
	}
	if s.sys != nil {
		s.sys.Close()
	}
	s.smp.Close()
	s.tfs.Close()
	return rec, err
}
