package guard

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultBaseline is how long the server is watched before the change.
const DefaultBaseline = 20 * time.Second

// DefaultWindow is the watch after an interactive apply: at most a minute,
// so the command returns while its user still waits for it.
const DefaultWindow = time.Minute

// Actions are what the guard does to the host, through the tune journal:
// the caller's (a local journal or a server host's session).
type Actions struct {
	// Apply makes the change and returns its journal session; a failed
	// apply has undone itself.
	Apply func(ctx context.Context) (session string, err error)
	// Rollback undoes one journal session and says what it did in a line.
	Rollback func(ctx context.Context, session string) (string, error)
	// Sessions lists the journal's apply sessions that started at or
	// after since and still have changes (a guard killed while applying
	// left one whose id it never learned).
	Sessions func(ctx context.Context, since time.Time) ([]string, error)
}

// Options say how to guard a change.
type Options struct {
	Monitor    MonitorOptions
	Baseline   time.Duration // DefaultBaseline when 0
	Window     time.Duration // DefaultWindow when 0
	Thresholds Thresholds
	// OnTick, when set, is told every tick (progress, metrics).
	OnTick func(Event)
}

// Event is one tick as the guard saw it.
type Event struct {
	Phase     string
	Tick      Tick
	Err       error // the tick's INFO or probe failure, if any
	Judge     *Judge
	Remaining time.Duration
}

// Verdict is how a guarded change ended.
type Verdict struct {
	State    *State `json:"state"`
	Trips    []Trip `json:"trips,omitempty"`
	Watch    []Tick `json:"watch"`
	Before   Sample `json:"before"`
	After    Sample `json:"after"`
	Rollback string `json:"rollback,omitempty"`
	// Requests and INFOs are the guard's own load on the server.
	Requests int64 `json:"probe_requests"`
	INFOs    int64 `json:"infos"`
}

// Kept reports whether the change stays: the window ended with no rule
// tripped.
func (v *Verdict) Kept() bool { return v.State.Phase == PhaseKept }

// ErrInterrupted is returned when the guard was stopped mid-window and
// rolled the change back.
var ErrInterrupted = errors.New("the guard was interrupted: the change was rolled back")

// ErrTripped is returned when a rule tripped and the change was rolled back.
var ErrTripped = errors.New("guard tripped: the change was rolled back")

func (o *Options) defaults() {
	o.Monitor.defaults()
	if o.Baseline <= 0 {
		o.Baseline = DefaultBaseline
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
}

// Run guards one change: the baseline, then Apply, then the watch; a
// tripped rule rolls the change back at once (ErrTripped). Cancelling ctx
// during the watch rolls back too: an interrupted guard leaves nothing
// unwatched. Every phase is journaled in claim before it starts.
func Run(ctx context.Context, claim *Claim, o Options, a Actions) (*Verdict, error) {
	o.defaults()
	st := claim.State
	st.Thresholds, st.ProbeRate, st.Interval, st.Window = o.Thresholds, o.Monitor.ProbeRate, o.Monitor.Interval, o.Window
	st.RedisNetwork, st.RedisAddr, st.RedisUser, st.RedisNetNS = o.Monitor.Redis.Network, o.Monitor.Redis.Addr, o.Monitor.Redis.Username, o.Monitor.Redis.NetNS
	st.Started = time.Now()
	if err := claim.Set(PhaseBaseline, ""); err != nil {
		return nil, err
	}
	mon, err := StartMonitor(ctx, o.Monitor)
	if err != nil {
		claim.Set(PhaseAbandoned, "the server could not be watched: "+err.Error())
		return nil, err
	}
	defer mon.Close()
	v := &Verdict{State: st, Before: mon.last}
	var ticks []Tick
	for end := time.Now().Add(o.Baseline); time.Now().Before(end); {
		t, _, err := nextTick(ctx, mon)
		if ctx.Err() != nil {
			claim.Set(PhaseAbandoned, "interrupted during the baseline; nothing was applied")
			return v, ctx.Err()
		}
		ticks = append(ticks, t)
		emit(o, Event{Phase: PhaseBaseline, Tick: t, Err: err, Remaining: time.Until(end)})
	}
	base := BaselineOf(ticks, mon.Expected())
	st.Baseline, st.ApplyStarted = &base, time.Now()
	if err := claim.Set(PhaseApplying, ""); err != nil {
		return v, err
	}
	session, err := a.Apply(ctx)
	if session == "" {
		claim.Set(PhaseAbandoned, fmt.Sprintf("the apply changed nothing to watch (%v)", err))
		return v, err
	}
	st.Session = session
	if err != nil {
		why := "the apply failed: " + err.Error()
		if rerr := rollback(context.WithoutCancel(ctx), claim, a, v, why); rerr != nil {
			return v, rerr
		}
		return v, errors.New(why + "; what it applied was rolled back")
	}
	return v, watch(ctx, claim, mon, o, a, v)
}

func emit(o Options, e Event) {
	if o.OnTick != nil {
		o.OnTick(e)
	}
}

// nextTick waits one interval and takes a tick.
func nextTick(ctx context.Context, mon *Monitor) (Tick, Sample, error) {
	select {
	case <-ctx.Done():
		return Tick{}, Sample{}, ctx.Err()
	case <-time.After(mon.Interval()):
	}
	tctx, cancel := context.WithTimeout(ctx, max(mon.Interval(), 2*time.Second))
	defer cancel()
	return mon.Tick(tctx)
}

// watch judges ticks until the state's WatchEnds, rolling back on a trip
// or on cancellation.
func watch(ctx context.Context, claim *Claim, mon *Monitor, o Options, a Actions, v *Verdict) error {
	st := claim.State
	if st.WatchEnds.IsZero() {
		st.WatchStarted = time.Now()
		st.WatchEnds = st.WatchStarted.Add(st.Window)
	}
	if err := claim.Set(PhaseWatching, ""); err != nil {
		return rollback(context.WithoutCancel(ctx), claim, a, v, "the guard could not journal its watch: "+err.Error())
	}
	judge := NewJudge(st.Thresholds, *st.Baseline, mon.Expected())
	for n := 1; time.Now().Before(st.WatchEnds); n++ {
		t, s, err := nextTick(ctx, mon)
		if ctx.Err() != nil {
			if err := rollback(context.WithoutCancel(ctx), claim, a, v, "the guard was interrupted mid-window"); err != nil {
				return err
			}
			return ErrInterrupted
		}
		v.Watch = append(v.Watch, t)
		if err == nil {
			v.After = s
		}
		trips := judge.Add(t, time.Now())
		emit(o, Event{Phase: PhaseWatching, Tick: t, Err: err, Judge: judge, Remaining: time.Until(st.WatchEnds)})
		if len(trips) > 0 {
			v.Trips, st.Trips = trips, trips
			v.Requests, v.INFOs = mon.Requests, mon.INFOs
			if rerr := rollback(ctx, claim, a, v, trips[0].String()); rerr != nil {
				return rerr
			}
			return ErrTripped
		}
		if n%5 == 0 {
			claim.Save() // the heartbeat: how long a killed guard left the change unwatched
		}
	}
	v.Requests, v.INFOs = mon.Requests, mon.INFOs
	return claim.Set(PhaseKept, fmt.Sprintf("no rule tripped in %s", st.Window))
}

// rollback undoes the guarded session and journals the outcome.
func rollback(ctx context.Context, claim *Claim, a Actions, v *Verdict, why string) error {
	sum, err := a.Rollback(ctx, claim.State.Session)
	v.Rollback = sum
	if err != nil {
		claim.Set(PhaseFailed, why+"; the rollback failed: "+err.Error()+" (run redline tune rollback)")
		return fmt.Errorf("%s; rolling back failed: %w (run redline tune rollback)", why, err)
	}
	return claim.Set(PhaseRolledBack, why)
}

// Policies for a guard found killed mid-window.
const (
	ResumeWatch    = "watch"    // watch on against the journaled baseline
	ResumeRollback = "rollback" // roll the change back
)

// Resume finishes a guard a killed redline left (Orphans): one killed
// before the change is closed (nothing was applied); one killed while
// applying rolls back what that apply journaled; one killed mid-window
// watches on for what is left of its window (a full window when it had
// ended meanwhile: its end was never seen) with policy ResumeWatch, or
// rolls back with ResumeRollback. The gap it was unwatched is journaled.
func Resume(ctx context.Context, claim *Claim, o Options, a Actions, policy string) (*Verdict, error) {
	o.defaults()
	st := claim.State
	v := &Verdict{State: st}
	switch st.Phase {
	case PhaseBaseline:
		return v, claim.Set(PhaseAbandoned, "the guard was killed during its baseline; nothing was applied")
	case PhaseApplying:
		return v, resumeApplying(ctx, claim, a, v)
	}
	gap := time.Since(st.Heartbeat).Round(time.Second)
	st.Resumed = append(st.Resumed, fmt.Sprintf("%s: taken over by pid %d after up to %s unwatched (policy %s)", time.Now().Format(time.DateTime), st.PID, gap, policy))
	if policy == ResumeRollback {
		return v, rollback(ctx, claim, a, v, "the guard was killed mid-window; the restarted guard rolled back (policy rollback)")
	}
	if time.Now().After(st.WatchEnds) {
		st.WatchEnds = time.Now().Add(st.Window)
	}
	o.Monitor.Redis.Network, o.Monitor.Redis.Addr, o.Monitor.Redis.Username, o.Monitor.Redis.NetNS = st.RedisNetwork, st.RedisAddr, st.RedisUser, st.RedisNetNS
	o.Monitor.ProbeRate, o.Monitor.Interval = st.ProbeRate, st.Interval
	mon, err := StartMonitor(ctx, o.Monitor)
	if err != nil {
		return v, rollback(ctx, claim, a, v, "the restarted guard cannot reach the server ("+err.Error()+")")
	}
	defer mon.Close()
	v.Before = mon.last
	return v, watch(ctx, claim, mon, o, a, v)
}

func resumeApplying(ctx context.Context, claim *Claim, a Actions, v *Verdict) error {
	ids, err := a.Sessions(ctx, claim.State.ApplyStarted)
	if err != nil {
		return fmt.Errorf("the guard was killed while applying; its session is not known: %w (run redline tune rollback)", err)
	}
	var sums []string
	for _, id := range ids {
		claim.State.Session = id
		if err := rollback(ctx, claim, a, v, "the guard was killed while applying; the restarted guard rolled the apply back"); err != nil {
			return err
		}
		sums = append(sums, v.Rollback)
	}
	if len(ids) == 0 {
		return claim.Set(PhaseAbandoned, "the guard was killed while applying; the journal holds nothing of that apply")
	}
	v.Rollback = fmt.Sprint(sums)
	return nil
}
