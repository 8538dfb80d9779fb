package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"redline/internal/testutil"
	"redline/internal/testutil/sshtest"
)

// sshCLI runs this redline (the test binary as main) from the client
// namespace of h with args, --ssh srv reaching h's real sshd: the --ssh
// plumbing end to end (probe, push of this test binary into the server
// host's cache, session). ssh itself is found as a root redline finds
// it, in root's system directories (never a fake on PATH).
func sshCLI(t *testing.T, ctx context.Context, h *sshtest.Hosts, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	argv := append([]string{"netns", "exec", h.Pair.Client, os.Args[0]}, args...)
	argv = append(argv, "--ssh-config", h.Config(t, "user", "host"))
	cmd := exec.CommandContext(ctx, "ip", argv...)
	cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1")
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String(), errs.String(), code
}

// TestInspectSSH: inspect --ssh (then doctor --ssh) pushes this redline to the "server host"
// (saying so), runs it there and prints the host's snapshot.
func TestInspectSSH(t *testing.T) {
	testutil.Heavy(t)
	home := t.TempDir()
	os.Chmod(home, 0o755)
	h := sshtest.New(t, sshtest.Options{SetEnv: []string{"HOME=" + home, "REDLINE_TEST_MAIN=1"}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, errs, code := sshCLI(t, ctx, h, "inspect", "--ssh", "srv", "--json", "--no-processes")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var snap struct {
		Hostname string `json:"hostname"`
	}
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("%v: %.200s", err, out)
	}
	if h, _ := os.Hostname(); snap.Hostname != h {
		t.Fatalf("hostname %q, want %q", snap.Hostname, h)
	}
	if !strings.Contains(errs, "copying this redline") {
		t.Fatalf("no word of the push on stderr: %s", errs)
	}
	cached, _ := filepath.Glob(filepath.Join(home, ".cache/redline/redline-*"))
	if len(cached) != 1 {
		t.Fatalf("cache %v, want one binary", cached)
	}
	out, errs, code = sshCLI(t, ctx, h, "doctor", "--ssh", "srv", "--no-redis", "--json")
	if code == ExitError || !strings.Contains(out, `"findings"`) || strings.Contains(errs, "copying") {
		t.Fatalf("doctor --ssh: exit %d (the cached binary, no second push): %.300s %s", code, out, errs)
	}
	// The textfile's host label is the host as the user named it.
	out, errs, code = sshCLI(t, ctx, h, "doctor", "--ssh", "srv", "--no-redis", "--format", "prom")
	if code == ExitError || !strings.Contains(out, `host="srv"`) {
		t.Fatalf("doctor --ssh --format prom: exit %d, no host=\"srv\" label: %.300s %s", code, out, errs)
	}
	_, errs, code = sshCLI(t, ctx, h, "inspect", "--ssh", "srv", "--no-processes", "--root", "/tmp")
	if code != ExitError || !strings.Contains(errs, "--root") {
		t.Fatalf("--ssh with --root: exit %d, %s", code, errs)
	}
}

// TestTuneSSH: apply, status and rollback with --ssh on a "server host"
// that is a network namespace: its own net.core.somaxconn changes and is
// restored, and the host's is untouched.
func TestTuneSSH(t *testing.T) {
	testutil.NeedRoot(t)
	testutil.HostState(t) // it checks the host's own somaxconn is untouched
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	h := sshtest.New(t, sshtest.Options{SetEnv: []string{"HOME=" + t.TempDir(), "REDLINE_TEST_MAIN=1"}})
	readNS := func() string { return h.ReadServerFile(t, "/proc/sys/net/core/somaxconn") }
	before, hostBefore := readNS(), readSysctl(t, "net.core.somaxconn")
	want := "1234"
	if before == want {
		want = "1235"
	}
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.yaml")
	os.WriteFile(plan, []byte("version: 1\nchanges:\n  - kind: sysctl\n    target: net.core.somaxconn\n    value: \""+want+"\"\n"), 0o644)
	state := filepath.Join(dir, "state")
	ssh := []string{"--ssh", "srv", "--state-dir", state}

	out, errs, code := sshCLI(t, ctx, h, append([]string{"tune", "apply", plan}, ssh...)...)
	if code != ExitError || !strings.Contains(errs, "--yes") || readNS() != before {
		t.Fatalf("apply without --yes: exit %d, %s%s, somaxconn %s", code, out, errs, readNS())
	}
	out, errs, code = sshCLI(t, ctx, h, append([]string{"tune", "apply", plan, "--yes"}, ssh...)...)
	if code != 0 || readNS() != want {
		t.Fatalf("apply: exit %d, somaxconn %s (want %s): %s%s", code, readNS(), want, out, errs)
	}
	out, errs, code = sshCLI(t, ctx, h, append([]string{"tune", "status"}, ssh...)...)
	if code != 0 || !strings.Contains(out, "applied") {
		t.Fatalf("status: exit %d: %s%s", code, out, errs)
	}
	for _, args := range [][]string{{"tune", "verify"}, {"tune", "verify", plan}} {
		out, errs, code = sshCLI(t, ctx, h, append(args, ssh...)...)
		if code != 0 {
			t.Fatalf("%v after apply: exit %d: %s%s", args, code, out, errs)
		}
	}
	out, errs, code = sshCLI(t, ctx, h, append([]string{"tune", "rollback"}, ssh...)...)
	if code != 0 || readNS() != before || !strings.Contains(out, "restored 1") {
		t.Fatalf("rollback: exit %d, somaxconn %s (want %s): %s%s", code, readNS(), before, out, errs)
	}
	out, errs, code = sshCLI(t, ctx, h, append([]string{"tune", "verify", plan}, ssh...)...)
	if code != ExitFailure || !strings.Contains(out, before) {
		t.Fatalf("verify of the plan after rollback: exit %d (want %d, the namespace's %s): %s%s", code, ExitFailure, before, out, errs)
	}
	// plan --ssh previews against the namespace's values, not this host's.
	out, errs, code = sshCLI(t, ctx, h, "tune", "plan", plan, "--ssh", "srv")
	if code != 0 || !strings.Contains(out, before+" -> "+want) && !strings.Contains(out, before+" → "+want) {
		t.Fatalf("plan --ssh: exit %d, want the namespace's %s -> %s: %s%s", code, before, want, out, errs)
	}
	if got := readSysctl(t, "net.core.somaxconn"); got != hostBefore {
		t.Fatalf("the host's somaxconn changed: %s, was %s", got, hostBefore)
	}
}
