package tune

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"redline/internal/change"
)

// Status is what happened to a change, or where it stands.
type Status string

// Statuses, shared by plan, apply, rollback, status and verify.
const (
	StatusPlanned       Status = "change"         // would be written (plan, dry run)
	StatusUnchanged     Status = "unchanged"      // already at the value; nothing written
	StatusRefused       Status = "refused"        // report-only; Reason says why
	StatusIntended      Status = "intended"       // journaled; the tool stopped before recording the write
	StatusApplied       Status = "applied"        // written, read back, journaled
	StatusFailed        Status = "failed"         // the write or its read-back failed
	StatusRestored      Status = "restored"       // rollback put the old value back
	StatusDrift         Status = "drift"          // someone else changed it since; left alone
	StatusGone          Status = "gone"           // a reboot, restart or exit undid it already
	StatusRestoreFailed Status = "restore-failed" // rollback could not restore it; still journaled
	StatusOK            Status = "ok"             // verify: the live value is the wanted one
	StatusMismatch      Status = "mismatch"       // verify: it is not
)

// Entry is one journaled change and where it stands.
type Entry struct {
	Session string            `json:"session"`
	Seq     int               `json:"seq"`
	Change  change.Change     `json:"change"`
	Old     string            `json:"old"`
	Aux     map[string]string `json:"aux,omitempty"`
	Ident   string            `json:"ident,omitempty"`
	// NetNS is the network namespace the change was made in.
	NetNS *NetNSRef `json:"netns,omitempty"`
	// Applied is the value read back after the write; HasApplied is false
	// when the tool stopped between the write and its record.
	Applied    string    `json:"applied,omitempty"`
	HasApplied bool      `json:"has_applied"`
	Status     Status    `json:"status"`
	Detail     string    `json:"detail,omitempty"`
	Time       time.Time `json:"time"`
}

// pending reports whether rollback still has to look at e.
func (e *Entry) pending() bool {
	switch e.Status {
	case StatusIntended, StatusApplied, StatusFailed, StatusRestoreFailed:
		return true
	}
	return false
}

// ours is the value e left in place: what was read back, or, when the tool
// died before recording it, what it meant to write.
func (e *Entry) ours() string {
	if e.HasApplied {
		return e.Applied
	}
	return e.Change.Value
}

// Session is one apply: its machine facts and its entries in order.
type Session struct {
	ID      string      `json:"id"`
	Started time.Time   `json:"started"`
	Info    SessionInfo `json:"info"`
	// End is "commit", "abort", or "" for an apply that is running or was
	// killed.
	End     string   `json:"end,omitempty"`
	Entries []*Entry `json:"entries"`
	// Refused lists changes the session did not make, with reasons.
	Refused []Entry `json:"refused,omitempty"`
}

// Pending returns the entries rollback still has to look at.
func (s *Session) Pending() []*Entry {
	var out []*Entry
	for _, e := range s.Entries {
		if e.pending() {
			out = append(out, e)
		}
	}
	return out
}

// ledger replays journal records into sessions.
func ledger(recs []record) ([]*Session, error) {
	var out []*Session
	byID := map[string]*Session{}
	entries := map[string]*Entry{}
	for _, r := range recs {
		s := byID[r.Session]
		if s == nil && r.Op != opBegin {
			return nil, fmt.Errorf("journal record %q for session %s comes before the session began", r.Op, r.Session)
		}
		key := fmt.Sprintf("%s/%d", r.Session, r.Seq)
		switch r.Op {
		case opBegin:
			s = &Session{ID: r.Session, Started: r.Time}
			if r.Begin != nil {
				s.Info = *r.Begin
			}
			byID[r.Session] = s
			out = append(out, s)
		case opCommit, opAbort:
			s.End = r.Op
		case opIntent:
			e := intentEntry(r)
			entries[key] = e
			s.Entries = append(s.Entries, e)
		case opRefused:
			// A refusal at write time (EIO) follows its intent; one found
			// by the pre-check has none.
			if e := entries[key]; e != nil {
				update(e, r)
			} else {
				s.Refused = append(s.Refused, refusedEntry(r))
			}
		default:
			e := entries[key]
			if e == nil {
				return nil, fmt.Errorf("journal record %q for %s has no intent before it", r.Op, key)
			}
			update(e, r)
		}
	}
	return out, nil
}

func intentEntry(r record) *Entry {
	e := &Entry{Session: r.Session, Seq: r.Seq, Aux: r.Aux, Ident: r.Ident, NetNS: r.NetNS, Status: StatusIntended, Time: r.Time}
	if r.Change != nil {
		e.Change = *r.Change
	}
	if r.Old != nil {
		e.Old = *r.Old
	}
	return e
}

func refusedEntry(r record) Entry {
	e := Entry{Session: r.Session, Seq: r.Seq, Status: StatusRefused, Detail: r.Detail, Time: r.Time}
	if r.Change != nil {
		e.Change = *r.Change
	}
	return e
}

// opStatus maps a record operation onto the entry's new status.
var opStatus = map[string]Status{
	opDone: StatusApplied, opFailed: StatusFailed, opRestored: StatusRestored,
	opDrift: StatusDrift, opGone: StatusGone, opRestoreFailed: StatusRestoreFailed,
	opRefused: StatusRefused,
}

func update(e *Entry, r record) {
	if st, ok := opStatus[r.Op]; ok {
		e.Status = st
	}
	if r.Applied != nil {
		e.Applied, e.HasApplied = *r.Applied, true
	}
	e.Detail = r.Detail
	e.Time = r.Time
}

// newSessionID is sortable by time and unique across quick re-runs.
func newSessionID(now time.Time) string {
	var b [3]byte
	rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

func ptr(s string) *string { return &s }
