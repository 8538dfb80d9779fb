package tune

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"redline/internal/change"
)

// RollbackOptions controls Rollback.
type RollbackOptions struct {
	// StateDir holds the journal; DefaultStateDir when empty.
	StateDir string
	// System is the machine to restore. When nil, each session's own
	// root decides: "/" is the live host, anything else a rehearsal tree.
	System *System
	// RedisPassword authenticates to the journaled Redis server (the
	// journal never stores passwords).
	RedisPassword string
	// Last rolls back only the most recent apply that still has changes.
	Last bool
	// Session, when set, rolls back only that apply (ApplyResult.Session).
	// A later apply's changes to the same targets make its values drift,
	// and they are left alone.
	Session string
	// DryRun says what would be restored without writing.
	DryRun bool
	// Progress, when set, is called after each entry.
	Progress func(Outcome)
}

// RollbackResult is what Rollback did, newest change first.
type RollbackResult struct {
	Outcomes []Outcome `json:"outcomes"`
	// Archived is true when nothing is left to undo and the journal moved
	// to history/.
	Archived bool `json:"archived"`
}

// Count returns how many outcomes have status st.
func (r *RollbackResult) Count(st Status) int { return count(r.Outcomes, st) }

// Rollback undoes journaled changes in reverse order. A value that is no
// longer ours (someone changed it since) is left alone and reported as
// drift; one that a reboot, a process exit or a Redis restart already undid
// is reported as gone. It works after the applying process was killed and
// after a reboot, because everything it needs is in the journal. An error
// means some values could not be restored; they stay journaled, so running
// it again retries them.
func Rollback(ctx context.Context, o RollbackOptions) (*RollbackResult, error) {
	dir := stateDir(o.StateDir)
	j, sessions, err := openForWrite(dir)
	if err != nil {
		return nil, err
	}
	defer j.close()
	r := &roller{j: j, dry: o.DryRun, progress: o.Progress, sys: systemsFor(o)}
	defer r.closeSystems()
	res := &RollbackResult{}
	var errs []error
	for i := len(sessions) - 1; i >= 0; i-- {
		s := sessions[i]
		if len(s.Pending()) == 0 || (o.Session != "" && s.ID != o.Session) {
			continue
		}
		sr, err := r.session(ctx, s)
		if sr != nil {
			res.Outcomes = append(res.Outcomes, sr.Outcomes...)
		}
		if err != nil {
			errs = append(errs, err)
		}
		if o.Last {
			break
		}
	}
	if len(errs) > 0 || o.DryRun {
		return res, errors.Join(errs...)
	}
	res.Archived, err = j.archiveIfDone()
	return res, err
}

// systemsFor returns how to reach each session's machine.
func systemsFor(o RollbackOptions) func(SessionInfo) (*System, error) {
	cache := map[string]*System{}
	return func(info SessionInfo) (*System, error) {
		if o.System != nil {
			return o.System, nil
		}
		key := info.Root
		if info.NetNS != nil {
			key += fmt.Sprintf("\x00%s\x00%d\x00%d", info.NetNS.Enter, info.NetNS.Ino, info.NetNS.Dev)
		}
		s := cache[key]
		if s == nil {
			if info.Root == "/" || info.Root == "" || info.Live {
				s = LiveSystem()
				if info.Root != "" {
					s.Root, s.FS = info.Root, OSFS{Root: info.Root}
				}
				// Act in the journaled namespace, verified, never in
				// whichever one rollback happens to run in.
				if ns := info.NetNS; ns != nil {
					s.NetNS, s.wantNS = ns.Enter, ns
					s.useNetNS()
				}
			} else {
				s = RehearsalSystem(info.Root)
			}
			cache[key] = s
		}
		if info.Redis != nil && s.Redis.Addr == "" {
			s.Redis = *info.Redis
		}
		// Cluster nodes named by the changes take the same password.
		s.Redis.Password = o.RedisPassword
		return s, nil
	}
}

type roller struct {
	j        *journal
	dry      bool
	progress func(Outcome)
	sys      func(SessionInfo) (*System, error)
	opened   []*System
}

func (r *roller) closeSystems() {
	for _, s := range r.opened {
		s.Close()
	}
}

// session rolls back one session's pending entries, newest first.
func (r *roller) session(ctx context.Context, sess *Session) (*RollbackResult, error) {
	s, err := r.sys(sess.Info)
	if err != nil {
		return nil, err
	}
	r.opened = append(r.opened, s)
	env := newRollEnv(sess, s)
	res := &RollbackResult{}
	var errs []error
	var restoredRedis []change.Change
	pending := sess.Pending()
	for i := len(pending) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			// Every entry so far is recorded: a new rollback resumes here.
			return res, fmt.Errorf("rollback interrupted with %d changes left (run it again): %w", i+1, err)
		}
		e := pending[i]
		out, op := r.entry(ctx, env, e)
		if !r.dry {
			if err := r.record(e, op, out); err != nil {
				return res, err
			}
		}
		if op == opRestoreFailed {
			errs = append(errs, fmt.Errorf("%s: %s", e.Change.Key(), out.Reason))
		}
		if op == opRestored {
			restoredRedis = append(restoredRedis, e.Change)
		}
		res.Outcomes = append(res.Outcomes, out)
		if r.progress != nil {
			r.progress(out)
		}
	}
	if nodes := redisNodes(restoredRedis); len(nodes) > 0 && sess.Info.Rewrite && !r.dry {
		if err := redisRewrite(ctx, s, nodes); err != nil {
			errs = append(errs, err)
		}
	}
	return res, errors.Join(errs...)
}

func (r *roller) record(e *Entry, op string, out Outcome) error {
	rec := record{Op: op, Session: e.Session, Seq: e.Seq, Detail: out.Reason}
	// Restore failures are synced: the next rollback must see them.
	return r.j.append(rec, op == opRestoreFailed)
}

// rollEnv is what rollback knows about a session's machine now.
type rollEnv struct {
	sess   *Session
	s      *System
	bootID string
	// nsGone says why the session's network namespace is gone, or "".
	nsGone string
}

func newRollEnv(sess *Session, s *System) rollEnv {
	return rollEnv{sess: sess, s: s, bootID: s.bootID(), nsGone: netNSGone(sess.Info.NetNS)}
}

// rebooted reports whether the machine booted since the session.
func (env rollEnv) rebooted() bool {
	return env.sess.Info.BootID != "" && env.bootID != "" && env.sess.Info.BootID != env.bootID
}

// entry decides and does what rollback owes one entry, and says which
// journal record describes it.
func (r *roller) entry(ctx context.Context, env rollEnv, e *Entry) (Outcome, string) {
	c := e.Change
	ops, err := opsFor(c)
	if err != nil {
		return Outcome{Change: c, Old: e.Old, Status: StatusRestoreFailed, Reason: err.Error()}, opRestoreFailed
	}
	out := Outcome{Change: c, Old: e.Old, New: e.ours()}
	if !r.dry {
		if err := recoverWrite(env.s, c); err != nil {
			out.Status, out.Reason = StatusRestoreFailed, err.Error()
			return out, opRestoreFailed
		}
	}
	if reason := gone(ctx, env, ops, e); reason != "" {
		out.Status, out.Reason = StatusGone, reason
		return out, opGone
	}
	cur, err := ops.read(ctx, env.s, c)
	if err != nil {
		if isMissing(err) {
			out.Status, out.Reason = StatusGone, "no longer exists: "+err.Error()
			return out, opGone
		}
		out.Status, out.Reason = StatusRestoreFailed, "read: "+err.Error()
		return out, opRestoreFailed
	}
	out.Now = cur
	switch out.Status, out.Reason = standing(e, cur); out.Status {
	case StatusRestored:
		return out, opRestored
	case StatusDrift:
		return out, opDrift
	}
	out.Reason = ""
	if r.dry {
		out.Status, out.Reason = StatusPlanned, "would restore"
		return out, ""
	}
	return r.restore(ctx, env.s, ops, e, out)
}

// standing is where a journaled change stands given its live value, in
// the one set of words status and rollback share: restored (already back
// at the old value, whoever put it there), drift (someone else's value:
// left alone), or applied (still what redline left, so rollback restores
// it).
func standing(e *Entry, cur string) (Status, string) {
	c := e.Change
	switch {
	case c.Same(cur, e.Old):
		return StatusRestored, alreadyOld(e)
	case !c.Same(cur, e.ours()):
		return StatusDrift, fmt.Sprintf("changed by someone else since redline set it (now %s, redline set %s); rollback leaves it alone", c.Show(cur), c.Show(e.ours()))
	}
	return StatusApplied, ""
}

func alreadyOld(e *Entry) string {
	switch e.Status {
	case StatusIntended:
		return "never written: the apply stopped before writing it"
	case StatusFailed:
		return "the failed write left it unchanged"
	}
	return "already back at the old value"
}

// gone says why a change is already undone by something other than us, or
// "" if it is not.
func gone(ctx context.Context, env rollEnv, ops *kindOps, e *Entry) string {
	if env.nsGone != "" && e.NetNS != nil {
		return env.nsGone
	}
	if env.rebooted() && e.Change.LostOn() != "" && e.Change.Kind != change.KindRedisConfig {
		return "the machine rebooted since; the value does not survive a reboot, so it is back at its boot default"
	}
	if e.Ident == "" || ops.identity == nil {
		return ""
	}
	id, err := ops.identity(ctx, env.s, e.Change)
	switch {
	case err != nil && e.Change.Kind == change.KindRedisConfig:
		return redisGone(env, env.s.redisAddr(e.Change), err)
	case err != nil && isMissing(err):
		return "the process has exited; its affinity went with it"
	case err != nil:
		return "" // let the read report it
	case id == e.Ident:
		return ""
	case e.Change.Kind == change.KindRedisConfig && env.sess.Info.Rewrite:
		return "" // the restarted server loaded our rewritten value
	case e.Change.Kind == change.KindRedisConfig:
		return "Redis restarted since (run_id changed); CONFIG SET values do not survive a restart"
	}
	return "the process restarted since (pid reused or new start time)"
}

// redisGone says whether a Redis server that cannot be reached is gone:
// nothing listens at its address (connection refused, no socket file), so
// its CONFIG SET values died with it, as with a lab's temporary server
// killed with the lab. With rewrite its redis.conf holds the tuned values
// and it will load them when started again, so it is not gone: the
// restore fails and stays journaled. Anything else (a timeout, a refused
// password) is not "gone" either.
func redisGone(env rollEnv, addr string, err error) string {
	if env.sess.Info.Rewrite || !(errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, fs.ErrNotExist)) {
		return ""
	}
	return fmt.Sprintf("Redis at %s is not running (%v); CONFIG SET values do not outlive the server", addr, unwrapAll(err))
}

// unwrapAll is the innermost error, for a short reason.
func unwrapAll(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// restore writes the old value back and reads it back.
func (r *roller) restore(ctx context.Context, s *System, ops *kindOps, e *Entry, out Outcome) (Outcome, string) {
	c := e.Change
	var err error
	if ops.restore != nil {
		err = ops.restore(ctx, s, c, e.Old, e.Aux)
	} else {
		err = ops.write(ctx, s, c, e.Old)
	}
	if err == nil {
		var got string
		if got, err = ops.read(ctx, s, c); err == nil && !c.Same(got, e.Old) {
			err = mismatch(c, e.Old, got)
		}
		out.Now = got
	}
	if err != nil {
		out.Status, out.Reason = StatusRestoreFailed, err.Error()
		return out, opRestoreFailed
	}
	out.Status = StatusRestored
	return out, opRestored
}

// archiveIfDone moves the journal to history/ when no session has anything
// left to undo, and says whether it did.
func (j *journal) archiveIfDone() (bool, error) {
	recs, err := readRecords(j.dir)
	if err != nil {
		return false, err
	}
	now, err := ledger(recs)
	if err != nil || !allDone(now) || len(now) == 0 {
		return false, err
	}
	return true, j.archive(now[0].ID)
}

func allDone(sessions []*Session) bool {
	for _, s := range sessions {
		if len(s.Pending()) > 0 {
			return false
		}
	}
	return true
}
