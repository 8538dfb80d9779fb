package tune

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// StatusUnknown is a journaled value that could not be read now.
const StatusUnknown Status = "unknown"

// StatusOptions controls Journaled.
type StatusOptions struct {
	StateDir      string
	System        *System // nil: each session's own root (see RollbackOptions)
	RedisPassword string
}

// StatusReport is every apply still in the journal and where each of its
// changes stands now.
type StatusReport struct {
	Sessions []SessionStatus `json:"sessions"`
	// Left are the values a rollback left alone because someone else had
	// changed them since redline set them (drift): they are neither
	// redline's nor what was there before the apply. Each Detail says what
	// the value was then. They come from the journal, or, once a rollback
	// archived it, from the newest journal in history/.
	Left []LeftEntry `json:"left,omitempty"`
}

// LeftEntry is a value a rollback left alone, with its value now, read
// live (Detail is what the rollback saw then, which a hand may since
// have undone).
type LeftEntry struct {
	Entry
	Now string `json:"now,omitempty"`
	// NowError is why the value could not be read now (a Redis password
	// not given, a process gone): not a change.
	NowError string `json:"now_error,omitempty"`
}

// SessionStatus is one journaled apply.
type SessionStatus struct {
	ID      string      `json:"id"`
	Info    SessionInfo `json:"info"`
	End     string      `json:"end,omitempty"`
	Started string      `json:"started"`
	// Rebooted is true when the machine booted since the apply.
	Rebooted bool `json:"rebooted"`
	// Changes are the pending entries: applied (still in place), drift,
	// gone, intended or unknown. LostOn in each says what else undoes it.
	Changes []StatusLine `json:"changes"`
	Refused []Entry      `json:"refused,omitempty"`
}

// StatusLine is one journaled change now.
type StatusLine struct {
	Outcome
	LostOn string `json:"lost_on"`
}

// Clean reports whether every journaled change is still in place.
func (r *StatusReport) Clean() bool {
	for _, s := range r.Sessions {
		for _, c := range s.Changes {
			if c.Status != StatusApplied {
				return false
			}
		}
	}
	return true
}

// Pending returns the number of changes a rollback would look at.
func (r *StatusReport) Pending() int {
	n := 0
	for _, s := range r.Sessions {
		n += len(s.Changes)
	}
	return n
}

// Journaled reads the journal without locking it or writing anything and
// compares each journaled change with the live value: still ours
// (applied), changed by someone else (drift), undone by a reboot or a
// restart (gone).
func Journaled(ctx context.Context, o StatusOptions) (*StatusReport, error) {
	recs, err := readRecords(stateDir(o.StateDir))
	if err != nil {
		return nil, err
	}
	sessions, err := ledger(recs)
	if err != nil {
		return nil, err
	}
	sys := systemsFor(RollbackOptions{System: o.System, RedisPassword: o.RedisPassword})
	rep := &StatusReport{}
	for _, sess := range sessions {
		if len(sess.Pending()) == 0 {
			continue
		}
		s, err := sys(sess.Info)
		if err != nil {
			return nil, err
		}
		st := sessionStatus(ctx, newRollEnv(sess, s))
		rep.Sessions = append(rep.Sessions, st)
		if o.System == nil {
			s.Close()
		}
	}
	left := leftAlone(sessions)
	if len(rep.Sessions) == 0 && len(left) == 0 {
		if left, err = lastArchivedLeft(stateDir(o.StateDir)); err != nil {
			return nil, err
		}
	}
	rep.Left = leftNow(ctx, o, left)
	return rep, nil
}

// leftOf is an entry a rollback left alone, with its session (whose
// system reads it).
type leftOf struct {
	sess *Session
	e    Entry
}

// leftAlone is the entries of sessions a rollback left as drift.
func leftAlone(sessions []*Session) []leftOf {
	var out []leftOf
	for _, sess := range sessions {
		for _, e := range sess.Entries {
			if e.Status == StatusDrift {
				out = append(out, leftOf{sess, *e})
			}
		}
	}
	return out
}

// leftNow reads each left value now, on its session's system.
func leftNow(ctx context.Context, o StatusOptions, left []leftOf) []LeftEntry {
	if len(left) == 0 {
		return nil
	}
	sys := systemsFor(RollbackOptions{System: o.System, RedisPassword: o.RedisPassword})
	opened := map[*System]bool{}
	out := make([]LeftEntry, len(left))
	for i, l := range left {
		out[i] = LeftEntry{Entry: l.e}
		s, err := sys(l.sess.Info)
		var ops *kindOps
		if err == nil {
			opened[s] = true
			ops, err = opsFor(l.e.Change)
		}
		if err == nil {
			out[i].Now, err = ops.read(ctx, s, l.e.Change)
		}
		if err != nil {
			out[i].NowError = err.Error()
		}
	}
	if o.System == nil {
		for s := range opened {
			s.Close()
		}
	}
	return out
}

// lastArchivedLeft is leftAlone of the newest journal in history/, the one
// the last rollback archived.
func lastArchivedLeft(dir string) ([]leftOf, error) {
	hist := filepath.Join(dir, historyDir)
	des, err := os.ReadDir(hist)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read journal history: %w", err)
	}
	var newest string
	var at time.Time
	for _, de := range des {
		info, err := de.Info()
		if err != nil || !de.Type().IsRegular() || !strings.HasSuffix(de.Name(), ".jsonl") {
			continue
		}
		if newest == "" || info.ModTime().After(at) {
			newest, at = de.Name(), info.ModTime()
		}
	}
	if newest == "" {
		return nil, nil
	}
	f, err := os.Open(filepath.Join(hist, newest))
	if err != nil {
		return nil, fmt.Errorf("read journal history: %w", err)
	}
	defer f.Close()
	recs, err := parseRecords(f, f.Name())
	if err != nil {
		return nil, err
	}
	sessions, err := ledger(recs)
	if err != nil {
		return nil, err
	}
	return leftAlone(sessions), nil
}

func sessionStatus(ctx context.Context, env rollEnv) SessionStatus {
	sess := env.sess
	st := SessionStatus{ID: sess.ID, Info: sess.Info, End: sess.End, Rebooted: env.rebooted(),
		Started: sess.Started.Format("2006-01-02 15:04:05 MST"), Refused: sess.Refused}
	for _, e := range sess.Pending() {
		st.Changes = append(st.Changes, StatusLine{Outcome: entryNow(ctx, env, e), LostOn: e.Change.LostOn()})
	}
	return st
}

// entryNow compares one journaled change with the live value.
func entryNow(ctx context.Context, env rollEnv, e *Entry) Outcome {
	c := e.Change
	out := Outcome{Change: c, Old: e.Old, New: e.ours(), Status: StatusUnknown}
	ops, err := opsFor(c)
	if err != nil {
		out.Reason = err.Error()
		return out
	}
	if reason := gone(ctx, env, ops, e); reason != "" {
		out.Status, out.Reason = StatusGone, reason
		return out
	}
	cur, err := ops.read(ctx, env.s, c)
	if err != nil {
		out.Reason = "cannot read it now: " + err.Error()
		return out
	}
	out.Now = cur
	out.Status, out.Reason = standing(e, cur)
	if out.Status == StatusApplied && e.Status == StatusRestoreFailed {
		out.Reason = "a rollback could not restore it: " + e.Detail
	}
	return out
}

// Verify compares the live value of every change in p with the value the
// plan wants: ok, mismatch, or refused when it cannot be read here.
func Verify(ctx context.Context, s *System, p *Plan) ([]Outcome, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	useRedis(s, p)
	out := make([]Outcome, len(p.Changes))
	for i, c := range p.Changes {
		ops, _ := opsFor(c)
		o := Outcome{Change: c, New: c.Value, Status: StatusOK}
		cur, err := ops.read(ctx, s, c)
		switch r, refused := AsRefusal(err); {
		case refused:
			o.Status, o.Reason = StatusRefused, r.Error()
		case err != nil:
			// not read is not changed: said apart, and the others still compared
			o.Status, o.Reason = StatusUnknown, "cannot read it now: "+err.Error()
		case !c.Same(cur, c.Value):
			o.Status, o.Now = StatusMismatch, cur
		default:
			o.Now = cur
		}
		out[i] = o
	}
	return out, nil
}
