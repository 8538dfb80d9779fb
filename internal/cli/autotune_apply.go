package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"redline/internal/autotune"
	"redline/internal/serverhost"
)

// autotuneApplyRefusal says why --apply cannot be honoured on this
// target before anything is measured ("" when it can): a managed server
// (one the session starts, here or over --ssh) stops when the session
// ends, and its CONFIG SET values with it, while a host knob of the same
// plan would stay: half a plan applied to nothing. --apply needs a server
// that outlives the session; for a managed one the answer is plan.yaml.
func autotuneApplyRefusal(t autotuneTarget) string {
	if t.attached() {
		return ""
	}
	return "--apply needs a server that outlives the session (an existing one: --addr or --socket); the managed server stops when the session ends: apply DIR/plan.yaml to yours with redline tune apply"
}

// autotuneApply leaves the confirmed plan applied, through the host's
// tune journal in a normal (kept, not scoped) apply, so that tune status
// shows it and tune rollback --state-dir undoes it; a plan that was not
// confirmed is refused in one line. It says what it did on w, and undo
// (the tune rollback command line).
func autotuneApply(ctx context.Context, w io.Writer, tg *localTarget, res *autotune.Result, undo string) error {
	c := res.Confirmation
	switch {
	case res.Stopped != "":
		fmt.Fprintln(w, "--apply: nothing applied: the session stopped before confirmation")
		return nil
	case c == nil:
		fmt.Fprintln(w, "--apply: nothing applied: nothing was kept")
		return nil
	case !c.Confirmed:
		fmt.Fprintln(w, "--apply: refused: the plan was not confirmed")
		return nil
	}
	p, err := tg.partsOf(c.Config)
	if err != nil {
		return err
	}
	srv := tg.base()
	if a, b := mustJSON(p.start), mustJSON(tg.start); a != b {
		return fmt.Errorf("--apply: the plan has start-up settings, which need a restart of the server: nothing applied (plan.yaml says how)")
	}
	plan, err := tg.plan(ctx, srv, p)
	if err != nil {
		return err
	}
	ar, err := tg.host.TuneApply(ctx, plan, srv.redis, serverhost.Kept)
	if err != nil {
		return fmt.Errorf("--apply: %w (what it had applied is rolled back)", err)
	}
	if p.steer {
		fmt.Fprintln(w, "--apply: steer is not left running: run redline steer beside the server")
	}
	fmt.Fprintf(w, "applied: %s to %s (journal session %s); undo: %s\n", c.Config, srv.addr, ar.Session, undo)
	return nil
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
