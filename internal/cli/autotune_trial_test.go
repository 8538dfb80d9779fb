package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/testutil"
	"redline/internal/tune"
)

// noPending fails t when the tune journal holds an unrestored change.
func noPending(t *testing.T, state string) {
	t.Helper()
	st, err := tune.Journaled(context.Background(), tune.StatusOptions{StateDir: state})
	if err != nil || st.Pending() > 0 {
		t.Errorf("the tune journal after the trial: %d pending, %v", st.Pending(), err)
	}
}

// TestAutotuneSessionStartupKnobs runs a short session end to end on a
// managed server started with its slow log off: the doctor puts the fix's
// knob first, the start-up knob's values are compared on servers started
// beside the baseline's, and afterwards nothing is journaled. A short workload and few rounds:
// this checks the trials, not what they measure (about a minute here).
func TestAutotuneSessionStartupKnobs(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	testutil.Heavy(t)
	dir := filepath.Join(t.TempDir(), "at")
	stdout, stderr, code := runCLI(t, context.Background(), nil, "autotune", "--dir", dir, "--seed", "1",
		"--server-config", "slowlog-log-slower-than -1",
		"--knob", "redis.slowlog-log-slower-than", "--knob", "redis.io-threads",
		"--workload", "-t set -c 4 -P 4 --duration 200ms --warmup 20ms", "--max-rounds", "10")
	if code != ExitOK && code != ExitFailure {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
	for _, want := range []string{
		"doctor: redis.slowlog-log-slower-than = 10000 screened first (from doctor rule slowlog-off",
		"screen redis.slowlog-log-slower-than = 10000",
		"screen redis.io-threads = 2",
		`redis.io-threads: already "1" on the target`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	res := readAutotuneResult(t, dir)
	if res.Trials[0].Setting.Knob != "redis.slowlog-log-slower-than" {
		t.Errorf("first trial %s", res.Trials[0].Setting)
	}
	if report, _ := os.ReadFile(filepath.Join(dir, "report.md")); !strings.Contains(string(report), "## Doctor\n\n- redis.slowlog-log-slower-than = 10000 screened first (from doctor rule slowlog-off") {
		t.Errorf("report.md has no doctor section:\n%s", report)
	}
	noPending(t, filepath.Join(dir, "tune"))
}
