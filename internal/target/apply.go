package target

import (
	"context"
	"encoding/json"
	"fmt"

	"redline/internal/autotune"
	"redline/internal/serverhost"
)

// apply leaves the confirmed plan applied, through the host's tune
// journal in a normal (kept, not scoped) apply, so that tune status shows
// it and tune rollback --state-dir undoes it; a plan that was not
// confirmed is refused in one line. lines say what it did, with undo (the
// tune rollback command line).
func (t *Target) apply(ctx context.Context, res *autotune.Result, undo string) (lines []string, err error) {
	c := res.Confirmation
	switch {
	case res.Stopped != "":
		return []string{"--apply: nothing applied: the session stopped before confirmation"}, nil
	case c == nil:
		return []string{"--apply: nothing applied: nothing was kept"}, nil
	case !c.Confirmed:
		return []string{"--apply: refused: the plan was not confirmed"}, nil
	}
	p, err := t.partsOf(c.Config)
	if err != nil {
		return nil, err
	}
	srv := t.base()
	if a, b := mustJSON(p.start), mustJSON(t.start); a != b {
		return nil, fmt.Errorf("--apply: the plan has start-up settings, which need a restart of the server: nothing applied (plan.yaml says how)")
	}
	plan, err := t.plan(ctx, srv, p)
	if err != nil {
		return nil, err
	}
	ar, err := t.host.TuneApply(ctx, plan, srv.redis, serverhost.Kept)
	if err != nil {
		return nil, fmt.Errorf("--apply: %w (what it had applied is rolled back)", err)
	}
	if p.steer {
		lines = append(lines, "--apply: steer is not left running: run redline steer beside the server")
	}
	return append(lines, fmt.Sprintf("applied: %s to %s (journal session %s); undo: %s", c.Config, srv.addr, ar.Session, undo)), nil
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
