package target

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/autotune"
	"redline/internal/bench/cmdline"
	"redline/internal/redistest"
	"redline/internal/stats"
	"redline/internal/tune"
)

// TestAutotuneApplyLeavesThePlanJournaled: --apply applies a confirmed
// plan to a real redis-server through the tune journal in a normal
// apply: it outlives the session (the host closed), tune status shows
// it, tune rollback --state-dir restores the server's value; a plan that
// was not confirmed is refused in one line and changes nothing.
func TestAutotuneApplyLeavesThePlanJournaled(t *testing.T) {
	srv := redistest.Start(t, "hz 10")
	state := filepath.Join(t.TempDir(), "tune")
	tg := attachedTestTarget(t, srv.Addr(), state)
	final := autotune.Config{{Knob: "redis.hz", Value: "50"}}
	res := &autotune.Result{Final: final, Confirmation: &autotune.Confirmation{Config: final, Result: stats.Comparison{Outcome: stats.Better}}}

	res.Confirmation.Confirmed = false
	undo := "redline tune rollback --state-dir " + state
	lines, err := tg.apply(context.Background(), res, undo)
	if err != nil || len(lines) != 1 || !strings.Contains(lines[0], "refused: the plan was not confirmed") {
		t.Fatalf("apply of a plan not confirmed: %v, said %q", err, lines)
	}
	if hz := redistest.ConfigValue(t, srv.Addr(), "hz"); hz != "10" {
		t.Fatalf("hz %s after a refused apply; want 10", hz)
	}
	res.Confirmation.Confirmed = true
	lines, err = tg.apply(context.Background(), res, undo)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "undo: redline tune rollback --state-dir "+state) {
		t.Errorf("apply said %q", lines)
	}
	tg.Close() // the session ends: a scoped apply would be rolled back here
	if hz := redistest.ConfigValue(t, srv.Addr(), "hz"); hz != "50" {
		t.Fatalf("hz %s after the session; want the applied 50", hz)
	}
	if st, err := tune.Journaled(context.Background(), tune.StatusOptions{StateDir: state}); err != nil || st.Pending() != 1 {
		t.Errorf("tune status does not show the applied plan: %+v, %v", st, err)
	}
	if _, err := tune.Rollback(context.Background(), tune.RollbackOptions{StateDir: state}); err != nil {
		t.Fatalf("tune rollback: %v", err)
	}
	if hz := redistest.ConfigValue(t, srv.Addr(), "hz"); hz != "10" {
		t.Errorf("hz %s after tune rollback; want 10", hz)
	}
}

// attachedTestTarget is the autotune target on an existing server, as
// --addr opens it (attached: never started, flushed or stopped).
func attachedTestTarget(t *testing.T, addr, state string) *Target {
	t.Helper()
	wl, err := cmdline.ParseWorkload(trialWorkload)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Spec: Spec{Addr: addr}, StateDir: state}
	tg, err := Open(context.Background(), o, wl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	return tg
}
