package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"redline/internal/redistest"
	"redline/internal/testutil"
)

func TestProfileUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"profile"}, "-o/--output DIR is required"},
		{[]string{"profile", "-o", "x", "--pid", "1", "-p", "7000"}, "not both"},
		{[]string{"profile", "-o", "x", "--duration", "0s"}, "--duration must be positive"},
		{[]string{"profile", "-o", "x", "--nope"}, "unknown flag"},
		{[]string{"profile", "extra"}, "unexpected argument"},
		{[]string{"profile", "-o", "x", "--pid", "-3"}, "is not a process"},
		{[]string{"profile", "-o", "x", "--pid", "1", "--base", "/nonexistent/folded.txt"}, "--base"},
		{[]string{"profile", "-o", "x", "--pass-file", "/nonexistent/pw"}, "redline profile: --pass-file: "},
	} {
		_, stderr, code := runCLI(t, context.Background(), nil, c.args...)
		if code != ExitError || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, ExitError, c.want)
		}
	}
}

func TestProfilePerfMissing(t *testing.T) {
	dir := t.TempDir()
	_, stderr, code := runCLI(t, context.Background(), nil, "profile", "--pid", strconv.Itoa(os.Getpid()),
		"--duration", "1s", "-o", dir, "--perf", "/nonexistent/perf")
	if code != ExitError || !strings.Contains(stderr, "linux-perf") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestProfileLive profiles an idle real redis-server found by its port:
// the files are written whatever the sample count.
func TestProfileLive(t *testing.T) {
	s := redistest.Start(t)
	dir := filepath.Join(t.TempDir(), "prof")
	base := filepath.Join(t.TempDir(), "folded.txt")
	if err := os.WriteFile(base, []byte("redis-server;epoll_wait 3\nredis-server;read 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, context.Background(), nil, "profile", "-p", strconv.Itoa(s.Port),
		"--duration", "1s", "-o", dir, "--json", "--base", base)
	if code == ExitError && (strings.Contains(stderr, "perf not found") || strings.Contains(stderr, "perf_event_paranoid")) {
		testutil.Need(t, "perf")
		t.Skipf("perf cannot sample here: %s", stderr)
	}
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, f := range []string{"folded.txt", "top.txt", "flame.svg", "breakdown.txt", "top.json", "breakdown.json", "diff.txt", "diff.svg", "syscalls.txt", "syscalls.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	bd, _ := os.ReadFile(filepath.Join(dir, "breakdown.txt"))
	if !strings.Contains(string(bd), "redis-server") {
		t.Errorf("breakdown has no redis-server thread:\n%s", bd)
	}
	if !strings.Contains(stdout, "samples") {
		t.Errorf("stdout: %s", stdout)
	}
}
