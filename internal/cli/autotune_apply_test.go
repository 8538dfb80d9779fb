package cli

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/autotune"
	"redline/internal/bench/cmdline"
	"redline/internal/redisadmin"
	"redline/internal/redistest"
	"redline/internal/stats"
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

	var out strings.Builder
	res.Confirmation.Confirmed = false
	undo := "redline tune rollback --state-dir " + state
	if err := autotuneApply(context.Background(), &out, tg, res, undo); err != nil || strings.Count(out.String(), "\n") != 1 || !strings.Contains(out.String(), "refused: the plan was not confirmed") {
		t.Fatalf("apply of a plan not confirmed: %v, said %q", err, out.String())
	}
	if hz := configValue(t, srv.Addr(), "hz"); hz != "10" {
		t.Fatalf("hz %s after a refused apply; want 10", hz)
	}
	out.Reset()
	res.Confirmation.Confirmed = true
	if err := autotuneApply(context.Background(), &out, tg, res, undo); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "undo: redline tune rollback --state-dir "+state) {
		t.Errorf("apply said %q", out.String())
	}
	tg.close() // the session ends: a scoped apply would be rolled back here
	if hz := configValue(t, srv.Addr(), "hz"); hz != "50" {
		t.Fatalf("hz %s after the session; want the applied 50", hz)
	}
	status, _, _ := runCLI(t, context.Background(), nil, "tune", "status", "--state-dir", state)
	if !strings.Contains(status, "hz") || strings.Contains(status, "nothing applied") {
		t.Errorf("tune status does not show the applied plan:\n%s", status)
	}
	if _, stderr, code := runCLI(t, context.Background(), nil, "tune", "rollback", "--state-dir", state); code != ExitOK {
		t.Fatalf("tune rollback: exit %d: %s", code, stderr)
	}
	if hz := configValue(t, srv.Addr(), "hz"); hz != "10" {
		t.Errorf("hz %s after tune rollback; want 10", hz)
	}
}

// attachedTestTarget is the autotune target on an existing server, as
// --addr opens it (attached: never started, flushed or stopped).
func attachedTestTarget(t *testing.T, addr, state string) *localTarget {
	t.Helper()
	wl, err := cmdline.ParseWorkload(trialWorkload)
	if err != nil {
		t.Fatal(err)
	}
	o := &autotuneOptions{target: autotuneTarget{Addr: addr}, stateDir: state}
	tg, err := openAutotuneTarget(context.Background(), &streams{out: io.Discard, err: io.Discard}, o, wl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.close)
	return tg
}

func configValue(t *testing.T, addr, name string) string {
	t.Helper()
	c, err := redisadmin.Dial(context.Background(), redisadmin.Options{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := c.ConfigGet(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return m[name]
}

// TestAutotuneApplyOnTheCommandLine: --apply is taken with an attached
// server (--addr); a session that keeps nothing applies nothing and says
// so in one line, and leaves nothing journaled.
func TestAutotuneApplyOnTheCommandLine(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	srv := redistest.Start(t)
	dir := filepath.Join(t.TempDir(), "at")
	stdout, stderr, code := runCLI(t, context.Background(), nil, "autotune", "--addr", srv.Addr(), "--apply", "--dir", dir, "--seed", "2",
		"--knob", "redis.slowlog-max-len", "--max-rounds", "8", "--workload", trialWorkload)
	if code != ExitOK && code != ExitFailure {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	res := readAutotuneResult(t, dir)
	want := "--apply: nothing applied: nothing was kept"
	if res.Confirmation != nil {
		want = "" // a neutral knob kept by chance (at most 5%): then applied or refused
	}
	if !strings.Contains(stdout, want) {
		t.Errorf("stdout does not say %q:\n%s", want, stdout)
	}
	if status, _, _ := runCLI(t, context.Background(), nil, "tune", "status", "--state-dir", filepath.Join(dir, "tune")); res.Confirmation == nil && !strings.Contains(status, "nothing applied") {
		t.Errorf("tune status after a session that kept nothing:\n%s", status)
	}
}
