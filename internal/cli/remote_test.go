package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"redline/internal/netns"
	"redline/internal/testutil"
)

// fakeSSH puts an "ssh" first on PATH that runs the remote command on this
// machine (in the network namespace ns, when set), with HOME in a
// temporary directory: the --ssh plumbing end to end (probe, push of this
// test binary into the cache, session) without an sshd. The real-sshd
// tests are in internal/remote.
func fakeSSH(t *testing.T, ns string) (home string) {
	t.Helper()
	bin, home := t.TempDir(), t.TempDir()
	wrap := ""
	if ns != "" {
		wrap = "ip netns exec " + ns + " "
	}
	script := "#!/bin/sh\nfor a; do last=$a; done\nexport HOME=" + home + " REDLINE_TEST_MAIN=1\nexec " + wrap + "sh -c \"$last\"\n"
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Setenv("TMPDIR", t.TempDir()) // the ControlMaster directory
	return home
}

// TestInspectSSH: inspect --ssh (then doctor --ssh) pushes this redline to the "server host"
// (saying so), runs it there and prints the host's snapshot.
func TestInspectSSH(t *testing.T) {
	testutil.Heavy(t)
	home := fakeSSH(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, errs, code := runCLI(t, ctx, nil, "inspect", "--ssh", "fakehost", "--json", "--no-processes")
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
	out, errs, code = runCLI(t, ctx, nil, "doctor", "--ssh", "fakehost", "--no-redis", "--json")
	if code == ExitError || !strings.Contains(out, `"findings"`) || strings.Contains(errs, "copying") {
		t.Fatalf("doctor --ssh: exit %d (the cached binary, no second push): %.300s %s", code, out, errs)
	}
	// The textfile's host label is the host as the user named it.
	out, errs, code = runCLI(t, ctx, nil, "doctor", "--ssh", "fakehost", "--no-redis", "--format", "prom")
	if code == ExitError || !strings.Contains(out, `host="fakehost"`) {
		t.Fatalf("doctor --ssh --format prom: exit %d, no host=\"fakehost\" label: %.300s %s", code, out, errs)
	}
	_, errs, code = runCLI(t, ctx, nil, "inspect", "--ssh", "fakehost", "--no-processes", "--root", "/tmp")
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
	pair, err := netns.NewPair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer pair.Remove()
	fakeSSH(t, pair.Server)
	readNS := func() string {
		var b []byte
		if err := netns.Do(pair.Server, func() (err error) { b, err = os.ReadFile("/proc/sys/net/core/somaxconn"); return err }); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	before, hostBefore := readNS(), readSysctl(t, "net.core.somaxconn")
	want := "1234"
	if before == want {
		want = "1235"
	}
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.yaml")
	os.WriteFile(plan, []byte("version: 1\nchanges:\n  - kind: sysctl\n    target: net.core.somaxconn\n    value: \""+want+"\"\n"), 0o644)
	state := filepath.Join(dir, "state")
	ssh := []string{"--ssh", "fakehost", "--state-dir", state}

	out, errs, code := runCLI(t, ctx, nil, append([]string{"tune", "apply", plan}, ssh...)...)
	if code != ExitError || !strings.Contains(errs, "--yes") || readNS() != before {
		t.Fatalf("apply without --yes: exit %d, %s%s, somaxconn %s", code, out, errs, readNS())
	}
	out, errs, code = runCLI(t, ctx, nil, append([]string{"tune", "apply", plan, "--yes"}, ssh...)...)
	if code != 0 || readNS() != want {
		t.Fatalf("apply: exit %d, somaxconn %s (want %s): %s%s", code, readNS(), want, out, errs)
	}
	out, errs, code = runCLI(t, ctx, nil, append([]string{"tune", "status"}, ssh...)...)
	if code != 0 || !strings.Contains(out, "applied") {
		t.Fatalf("status: exit %d: %s%s", code, out, errs)
	}
	for _, args := range [][]string{{"tune", "verify"}, {"tune", "verify", plan}} {
		out, errs, code = runCLI(t, ctx, nil, append(args, ssh...)...)
		if code != 0 {
			t.Fatalf("%v after apply: exit %d: %s%s", args, code, out, errs)
		}
	}
	out, errs, code = runCLI(t, ctx, nil, append([]string{"tune", "rollback"}, ssh...)...)
	if code != 0 || readNS() != before || !strings.Contains(out, "restored 1") {
		t.Fatalf("rollback: exit %d, somaxconn %s (want %s): %s%s", code, readNS(), before, out, errs)
	}
	out, errs, code = runCLI(t, ctx, nil, append([]string{"tune", "verify", plan}, ssh...)...)
	if code != ExitFailure || !strings.Contains(out, before) {
		t.Fatalf("verify of the plan after rollback: exit %d (want %d, the namespace's %s): %s%s", code, ExitFailure, before, out, errs)
	}
	// plan --ssh previews against the namespace's values, not this host's.
	out, errs, code = runCLI(t, ctx, nil, "tune", "plan", plan, "--ssh", "fakehost")
	if code != 0 || !strings.Contains(out, before+" -> "+want) && !strings.Contains(out, before+" → "+want) {
		t.Fatalf("plan --ssh: exit %d, want the namespace's %s -> %s: %s%s", code, before, want, out, errs)
	}
	if got := readSysctl(t, "net.core.somaxconn"); got != hostBefore {
		t.Fatalf("the host's somaxconn changed: %s, was %s", got, hostBefore)
	}
}
