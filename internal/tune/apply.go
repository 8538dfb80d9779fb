package tune

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"redline/internal/change"
)

// Outcome is what happened to one change (or what would happen, in a
// preview).
type Outcome struct {
	Change change.Change `json:"change"`
	// Old is the value before; New the value read back after (or the
	// wanted value in a preview); Now the live value when a rollback or
	// status found it changed by someone else.
	Old    string `json:"old"`
	New    string `json:"new,omitempty"`
	Now    string `json:"now,omitempty"`
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
}

// ApplyOptions controls Apply.
type ApplyOptions struct {
	// StateDir holds the journal; DefaultStateDir when empty.
	StateDir string
	// Progress, when set, is called after each change.
	Progress func(Outcome)

	// AtCrashPoint, when set, is called at each point where a process
	// that dies leaves the journal something to finish: after the begin
	// record and after the commit (seq 0), after each change's intent,
	// write and done (seq from 1). Tests kill the process there (steer's
	// kill -9 tests); it must not touch the journal.
	AtCrashPoint func(seq int, at CrashPoint)

	// hook, in tests, is called at each step of each change; returning
	// true makes Apply stop dead there, as if the process were killed.
	hook func(step int, at phase) bool
}

// CrashPoint names a point of an apply where the process can die
// (ApplyOptions.AtCrashPoint).
type CrashPoint string

// The crash points, in the order an apply passes them.
const (
	CrashBegin   CrashPoint = "begin"   // the session's begin record is on disk
	CrashIntent  CrashPoint = "intent"  // a change's intent is on disk, nothing written
	CrashWritten CrashPoint = "written" // written, not read back or recorded
	CrashDone    CrashPoint = "done"    // written, read back and recorded
	CrashCommit  CrashPoint = "commit"  // the commit record is on disk
)

// crashPoints maps the test hook's phases onto their crash points.
var crashPoints = [phases]CrashPoint{afterIntent: CrashIntent, afterWrite: CrashWritten, afterDone: CrashDone}

// phase is a point inside one change's apply where a crash can happen.
type phase int

const (
	afterIntent phase = iota // the intent is on disk, nothing written
	afterWrite               // written, not read back or recorded
	afterDone                // written, read back and recorded
	phases
)

// ApplyResult is what Apply did.
type ApplyResult struct {
	Session  string    `json:"session"`
	Outcomes []Outcome `json:"outcomes"`
	// Undo is set when a failure made Apply roll back what it had applied.
	Undo *RollbackResult `json:"undo,omitempty"`
}

// Count returns how many outcomes have status st.
func (r *ApplyResult) Count(st Status) int { return count(r.Outcomes, st) }

func count(outs []Outcome, st Status) int {
	n := 0
	for _, o := range outs {
		if o.Status == st {
			n++
		}
	}
	return n
}

// Preview reads the live value of every change and says what applying the
// plan would do, without writing anything. It fails when a change is wrong
// for this machine, and when a Redis setting would be changed on some
// cluster nodes but is refused on another (nodesSplit).
func Preview(ctx context.Context, s *System, p *Plan) ([]Outcome, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	useRedis(s, p)
	s.useNetNS()
	out := make([]Outcome, len(p.Changes))
	for i, c := range p.Changes {
		o, err := preview(ctx, s, c)
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	// A cluster would be left half-changed: refuse before any write.
	return out, nodesSplit(out)
}

// preview is check + read for one change: refused, unchanged or planned.
func preview(ctx context.Context, s *System, c change.Change) (Outcome, error) {
	ops, err := opsFor(c)
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{Change: c, New: c.Value, Status: StatusPlanned}
	old, rerr := ops.read(ctx, s, c)
	o.Old = old
	if err := ops.check(ctx, s, c); err != nil || rerr != nil {
		if err == nil {
			err = rerr
		}
		if r, ok := AsRefusal(err); ok {
			o.Status, o.Reason = StatusRefused, r.Error()
			return o, nil
		}
		return o, fmt.Errorf("%s: %w", c.Key(), err)
	}
	if c.Same(old, c.Value) {
		o.Status = StatusUnchanged
	}
	return o, nil
}

func useRedis(s *System, p *Plan) {
	if p.Redis != nil && s.Redis.Addr == "" {
		s.Redis.Network, s.Redis.Addr, s.Redis.User = p.Redis.Network, p.Redis.Addr, p.Redis.User
	}
}

// Apply makes the plan's changes behind the journal in o.StateDir. For each
// change it journals the old value and fsyncs before writing, reads back
// after writing, and journals the value read back. Changes that cannot be
// made here are refused and reported; the rest go ahead. Any failure (a
// write error that is not a refusal, or a read-back that differs) rolls
// back everything this apply changed and returns an error.
func Apply(ctx context.Context, s *System, p *Plan, o ApplyOptions) (*ApplyResult, error) {
	// A change that is wrong for this machine (not merely refused) stops
	// the apply before anything is written.
	if _, err := Preview(ctx, s, p); err != nil {
		return nil, err
	}
	j, sessions, err := openForWrite(stateDir(o.StateDir))
	if err != nil {
		return nil, err
	}
	if err := refuseInterrupted(sessions); err != nil {
		j.close()
		return nil, err
	}
	a := &applier{s: s, j: j, o: o, id: newSessionID(time.Now())}
	if err := a.begin(ctx, p); err != nil {
		j.close()
		return nil, err
	}
	a.crashPoint(0, CrashBegin)
	res, err := a.run(ctx, p)
	if a.dead {
		return res, errKilled
	}
	if cerr := j.close(); err == nil && cerr != nil {
		err = cerr
	}
	return res, err
}

// errKilled is returned only in tests, by an apply the hook stopped dead.
var errKilled = errors.New("apply stopped dead by the test hook")

func stateDir(d string) string {
	if d == "" {
		return DefaultStateDir
	}
	return d
}

// openForWrite locks the journal and replays it.
func openForWrite(dir string) (*journal, []*Session, error) {
	j, err := openJournal(dir)
	if err != nil {
		return nil, nil, err
	}
	recs, err := readRecords(dir)
	if err == nil {
		var sessions []*Session
		if sessions, err = ledger(recs); err == nil {
			return j, sessions, nil
		}
	}
	j.close()
	return nil, nil, err
}

// refuseInterrupted stops a new apply on top of one that was killed: its
// changes must be rolled back (or looked at) first.
func refuseInterrupted(sessions []*Session) error {
	for _, s := range sessions {
		if s.End == "" && len(s.Pending()) > 0 {
			return fmt.Errorf("apply %s was interrupted (%d changes journaled); run `redline tune status` to see them and `redline tune rollback` before applying again", s.ID, len(s.Pending()))
		}
	}
	return nil
}

type applier struct {
	s    *System
	j    *journal
	o    ApplyOptions
	id   string
	info SessionInfo
	dead bool
}

func (a *applier) begin(ctx context.Context, p *Plan) error {
	host, _ := os.Hostname()
	a.info = SessionInfo{Hostname: host, BootID: a.s.bootID(), Root: a.s.Root, Live: a.s.Live, Sources: p.Sources}
	ns, err := a.s.netNSRef()
	if err != nil {
		return err
	}
	a.info.NetNS = ns
	if p.Redis != nil {
		r := a.s.Redis
		r.Password = ""
		a.info.Redis, a.info.Rewrite = &r, p.Redis.Rewrite
	}
	return a.j.append(record{Op: opBegin, Session: a.id, Begin: &a.info}, true)
}

// run applies each change; on failure it undoes this session.
func (a *applier) run(ctx context.Context, p *Plan) (*ApplyResult, error) {
	res := &ApplyResult{Session: a.id}
	var failure error
	for i, c := range p.Changes {
		if failure = ctx.Err(); failure != nil {
			break
		}
		out, err := a.one(ctx, i+1, c)
		if a.dead {
			return res, nil
		}
		res.Outcomes = append(res.Outcomes, out)
		if a.o.Progress != nil {
			a.o.Progress(out)
		}
		if failure = err; failure != nil {
			break
		}
	}
	if failure == nil {
		failure = nodesSplit(res.Outcomes)
	}
	if nodes := redisNodes(applied(res.Outcomes)); failure == nil && a.info.Rewrite && len(nodes) > 0 {
		failure = redisRewrite(ctx, a.s, nodes)
	}
	if failure == nil {
		if err := a.j.append(record{Op: opCommit, Session: a.id}, true); err != nil {
			return res, err
		}
		a.crashPoint(0, CrashCommit)
		// An apply that changed nothing leaves nothing to undo.
		_, err := a.j.archiveIfDone()
		return res, err
	}
	// The undo must finish even when the failure was a cancelled context
	// (Ctrl-C during apply).
	undo, uerr := a.undo(context.WithoutCancel(ctx))
	res.Undo = undo
	if uerr != nil {
		return res, fmt.Errorf("%w; and the rollback after it failed too: %v (run `redline tune rollback` again)", failure, uerr)
	}
	return res, fmt.Errorf("%w (everything this apply changed was rolled back)", failure)
}

// applied lists the changes an apply made.
func applied(outs []Outcome) []change.Change {
	var out []change.Change
	for _, o := range outs {
		if o.Status == StatusApplied {
			out = append(out, o.Change)
		}
	}
	return out
}

// nodesSplit refuses a cluster left half-changed: a Redis setting that
// is (or would be) changed on some nodes but was refused on another. The
// nodes of a cluster get a setting all or none, so the apply fails and
// rolls back the nodes it changed. Works on a preview (planned) and on
// an apply (applied) alike.
func nodesSplit(outs []Outcome) error {
	changed := map[string][]string{}
	refused := map[string][]string{}
	for _, o := range outs {
		c := o.Change
		if c.Kind != change.KindRedisConfig || c.Node == "" {
			continue
		}
		switch o.Status {
		case StatusApplied, StatusPlanned:
			changed[c.Target] = append(changed[c.Target], c.Node)
		case StatusRefused:
			refused[c.Target] = append(refused[c.Target], c.Node+" ("+o.Reason+")")
		}
	}
	var errs []error
	for _, o := range outs {
		t := o.Change.Target
		if len(changed[t]) > 0 && len(refused[t]) > 0 {
			errs = append(errs, fmt.Errorf("redis-config %s: refused on node %s but changed on %s: a cluster's nodes get a setting all or none",
				t, strings.Join(refused[t], ", node "), strings.Join(changed[t], ", ")))
			delete(refused, t)
		}
	}
	return errors.Join(errs...)
}

// undo rolls back this session after a failure, without a second lock.
func (a *applier) undo(ctx context.Context) (*RollbackResult, error) {
	recs, err := readRecords(a.j.dir)
	if err != nil {
		return nil, err
	}
	sessions, err := ledger(recs)
	if err != nil {
		return nil, err
	}
	r := &roller{j: a.j, sys: func(SessionInfo) (*System, error) { return a.s, nil }}
	for _, s := range sessions {
		if s.ID == a.id {
			res, err := r.session(ctx, s)
			if aerr := a.j.append(record{Op: opAbort, Session: a.id}, true); err == nil {
				err = aerr
			}
			if err == nil {
				_, err = a.j.archiveIfDone()
			}
			return res, err
		}
	}
	return nil, fmt.Errorf("session %s missing from the journal", a.id)
}

// stop reports whether the test hook kills the apply at this point; if so
// the journal is closed as process exit would close it, and nothing else
// runs.
func (a *applier) stop(step int, at phase) bool {
	a.crashPoint(step, crashPoints[at])
	if a.o.hook == nil || !a.o.hook(step, at) {
		return false
	}
	a.j.close()
	a.dead = true
	return true
}

func (a *applier) crashPoint(seq int, at CrashPoint) {
	if a.o.AtCrashPoint != nil {
		a.o.AtCrashPoint(seq, at)
	}
}

// one applies change c, the seq-th of the plan.
func (a *applier) one(ctx context.Context, seq int, c change.Change) (Outcome, error) {
	ops, _ := opsFor(c)
	out := Outcome{Change: c}
	// Check again: an earlier change may have made this one possible
	// (new channels create queue files) or impossible.
	if err := ops.check(ctx, a.s, c); err != nil {
		return a.refusedOrFailed(out, seq, c, err, false)
	}
	old, err := ops.read(ctx, a.s, c)
	if err != nil {
		return a.refusedOrFailed(out, seq, c, err, false)
	}
	out.Old = old
	if c.Same(old, c.Value) {
		out.Status, out.New = StatusUnchanged, old
		return out, nil
	}
	if err := a.intent(ctx, ops, seq, c, old); err != nil {
		return a.refusedOrFailed(out, seq, c, err, false)
	}
	if a.stop(seq, afterIntent) {
		return out, nil
	}
	if err := ops.write(ctx, a.s, c, c.Value); err != nil {
		return a.refusedOrFailed(out, seq, c, err, true)
	}
	if a.stop(seq, afterWrite) {
		return out, nil
	}
	return a.readBack(ctx, ops, seq, c, out)
}

// intent journals the old value (and what identifies the target) and
// fsyncs it: only then may the write happen.
func (a *applier) intent(ctx context.Context, ops *kindOps, seq int, c change.Change, old string) error {
	rec := record{Op: opIntent, Session: a.id, Seq: seq, Change: &c, Old: ptr(old)}
	if nsBound(c) {
		rec.NetNS = a.info.NetNS
	}
	var err error
	if ops.aux != nil {
		if rec.Aux, err = ops.aux(ctx, a.s, c); err != nil {
			return err
		}
	}
	if ops.identity != nil {
		if rec.Ident, err = ops.identity(ctx, a.s, c); err != nil {
			return err
		}
	}
	return a.j.append(rec, true)
}

func (a *applier) readBack(ctx context.Context, ops *kindOps, seq int, c change.Change, out Outcome) (Outcome, error) {
	got, err := ops.read(ctx, a.s, c)
	rec := record{Op: opFailed, Session: a.id, Seq: seq}
	if err == nil && !c.Same(got, c.Value) {
		// Record what was read: it is what this apply left, so rollback
		// treats it as ours and restores the old value over it.
		err, rec.Applied = mismatch(c, c.Value, got), ptr(got)
	}
	if err != nil {
		out.Status, out.Reason, out.New = StatusFailed, err.Error(), got
		rec.Detail = err.Error()
		return out, errors.Join(err, a.j.append(rec, true))
	}
	out.Status, out.New = StatusApplied, got
	if err := a.j.append(record{Op: opDone, Session: a.id, Seq: seq, Applied: ptr(got)}, false); err != nil {
		return out, err
	}
	a.stop(seq, afterDone)
	return out, nil
}

// refusedOrFailed records a refusal (the apply goes on) or a failure (it
// stops and rolls back). journaled says whether an intent precedes it.
func (a *applier) refusedOrFailed(out Outcome, seq int, c change.Change, err error, journaled bool) (Outcome, error) {
	if r, ok := AsRefusal(err); ok {
		out.Status, out.Reason = StatusRefused, r.Error()
		return out, a.j.append(record{Op: opRefused, Session: a.id, Seq: seq, Change: &c, Detail: out.Reason}, false)
	}
	out.Status, out.Reason = StatusFailed, err.Error()
	if journaled {
		if jerr := a.j.append(record{Op: opFailed, Session: a.id, Seq: seq, Detail: out.Reason}, true); jerr != nil {
			err = errors.Join(err, jerr)
		}
	}
	return out, fmt.Errorf("%s: %w", c.Key(), err)
}

// irqbalanceUndoes is the one wording of what a running irqbalance does
// to pinned IRQs: a plan's warning and the irq-local profile's note.
func irqbalanceUndoes(pids, irqs string) string {
	return fmt.Sprintf("irqbalance is running (pid %s) and will rewrite %s' affinity within 10 s", pids, irqs)
}

// Warnings are things about a plan as a whole that the user should know
// before applying it: IRQ pinning that a running irqbalance will undo.
func Warnings(s *System, p *Plan) []string {
	var out []string
	irqs, stops := 0, false
	for _, c := range p.Changes {
		if isIRQFile(c) {
			irqs++
		}
		stops = stops || (c.Kind == change.KindService && c.Target == "irqbalance" && c.Value == "inactive")
	}
	if irqs == 0 || stops {
		return nil
	}
	if pids, err := findProcesses(s.FS, "irqbalance"); err == nil && len(pids) > 0 {
		out = append(out, irqbalanceUndoes(pids[0], fmt.Sprintf("the %d pinned IRQs", irqs))+
			": put {kind: service, target: irqbalance, value: inactive} before them, or plan with --profile irq-local")
	}
	return out
}
