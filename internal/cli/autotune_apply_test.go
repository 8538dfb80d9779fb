package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/redistest"
	"redline/internal/target"
)

// TestAutotuneApplyOnTheCommandLine: --apply is taken with an attached
// server (--addr); a session that keeps nothing applies nothing and says
// so in one line, and leaves nothing journaled.
func TestAutotuneApplyOnTheCommandLine(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	srv := redistest.Start(t)
	dir := filepath.Join(t.TempDir(), "at")
	stdout, stderr, code := runCLI(t, context.Background(), nil, "autotune", "--addr", srv.Addr(), "--apply", "--dir", dir, "--seed", "2",
		"--knob", "redis.slowlog-max-len", "--max-rounds", "8", "--workload", "-t set -c 4 -P 4 --duration 200ms --warmup 20ms")
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

// TestAutotuneClusterApplyRefusal: --apply on a managed cluster (stopped
// with the session) is refused before anything is measured; an existing
// one is accepted (target's TestAutotuneClusterApply applies to it).
func TestAutotuneClusterApplyRefusal(t *testing.T) {
	if autotuneApplyRefusal(target.Spec{Cluster: true, Primaries: 3}) == "" || autotuneApplyRefusal(target.Spec{Cluster: true, Addr: "127.0.0.1:7000"}) != "" {
		t.Error("--apply: want a managed cluster refused, an existing one accepted")
	}
}
