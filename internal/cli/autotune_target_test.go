package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"redline/internal/autotune"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/target"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// TestAutotuneAttachedServer: autotune of an existing server (--addr)
// tries its CONFIG SET knobs, lists the restart knob as needing a managed
// server, never flushes its data, and leaves its settings as found. While
// it holds its tune state directory, redline tune rollback of that
// directory refuses (exit 2, naming the autotune) instead of undoing a
// trial under its measurement.
func TestAutotuneAttachedServer(t *testing.T) {
	const password = "s3cret-attached-pw"
	srv := redistest.Start(t, "requirepass "+password)
	t.Setenv("REDISCLI_AUTH", password)
	c := redistest.Client(t, srv)
	redistest.Do(t, c, "AUTH", password)
	redistest.Do(t, c, "SET", "someones-key", "1")
	dir := filepath.Join(t.TempDir(), "at")
	state := filepath.Join(dir, "tune")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	type answer struct {
		out, err string
		code     int
	}
	done := make(chan answer, 1)
	go func() {
		out, errs, code := runCLI(t, ctx, nil, "autotune", "--addr", srv.Addr(), "--dir", dir, "--seed", "1",
			"--knob", "redis.hz", "--knob", "redis.io-threads", "--workload", "-t set -c 4 --duration 300ms", "--max-rounds", "8")
		done <- answer{out, errs, code}
	}()
	held := func() bool {
		b, _ := os.ReadFile(filepath.Join(state, "hold"))
		return strings.Contains(string(b), "redline autotune")
	}
	var a answer
	refused := false
wait:
	for {
		select {
		case a = <-done:
			break wait
		case <-time.After(50 * time.Millisecond):
		}
		if refused || !held() {
			continue
		}
		_, errs, code := runCLI(t, ctx, nil, "tune", "rollback", "--state-dir", state)
		if code != ExitError || !strings.Contains(errs, "in use by redline autotune (pid") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("tune rollback under a running autotune: exit %d, %q; want exit 2 naming it, in one line", code, errs)
		}
		refused = true
	}
	if !refused {
		t.Error("the autotune never held its state directory while it ran")
	}
	if a.code != ExitOK && a.code != ExitFailure || strings.Contains(a.out, "stopped:") {
		t.Fatalf("autotune: exit %d (want a session run to its end): %s%s", a.code, a.out, a.err)
	}
	if !strings.Contains(a.out, "target: the existing redis-server at "+srv.Addr()) ||
		!strings.Contains(a.out, "redis.io-threads: needs a server restart") || !strings.Contains(a.out, "redis.hz = 50") {
		t.Errorf("answer:\n%s", a.out)
	}
	if v := redistest.Do(t, c, "CONFIG", "GET", "hz"); len(v.Elems) != 2 || v.Elems[1].Str != "10" {
		t.Errorf("hz after the session: %+v, want 10 as found", v)
	}
	if v := redistest.Do(t, c, "EXISTS", "someones-key"); v.Str != "1" {
		t.Error("the attached server's data was flushed")
	}
	st, err := tune.Journaled(ctx, tune.StatusOptions{StateDir: state})
	if err != nil || st.Pending() != 0 {
		t.Errorf("the journal after the session: %v pending, %v", st, err)
	}
	if _, errs, code := runCLI(t, ctx, nil, "tune", "rollback", "--state-dir", state); code != ExitOK {
		t.Errorf("tune rollback after the session: exit %d: %s", code, errs)
	}
	// --resume reopens the same target from the journal, the password
	// read again; it is in no file of the session and never printed.
	// (its address given again: the password goes only where the command
	// line says, docs/security.md).
	out, errs, code := runCLI(t, ctx, nil, "autotune", "--resume", dir, "--addr", srv.Addr())
	if code != a.code || !strings.Contains(out, "target: the existing redis-server at "+srv.Addr()) {
		t.Errorf("--resume: exit %d (the session's was %d): %s%s", code, a.code, out, errs)
	}
	for _, text := range []string{a.out, a.err, out, errs} {
		if strings.Contains(text, password) {
			t.Errorf("the password was printed: %s", text)
		}
	}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if b, _ := os.ReadFile(path); err == nil && !d.IsDir() && strings.Contains(string(b), password) {
			t.Errorf("the password is in %s", path)
		}
		return nil
	})
}

// TestAutotuneTargetUsageErrors: a target's flags that cannot go together
// are one line and exit 2, before anything starts.
func TestAutotuneTargetUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "127.0.0.1:1", "--socket", "/tmp/x.sock"}, "not both"},
		{[]string{"--addr", "127.0.0.1:1", "--server-config", "hz 100"}, "--server-config is the managed server's"},
		{[]string{"--pass-file", "/etc/hostname"}, "are an attached server's"},
		{[]string{"--ssh", "h", "--socket", "/tmp/x.sock"}, "--socket is a path on this host"},
		{[]string{"--ssh", "h", "--netns"}, "--netns starts a managed server here"},
		{[]string{"--ssh-config", "/dev/null"}, "are for --ssh HOST"},
		{[]string{"--ssh", "h", "--ssh-heartbeat", "1ms"}, "is not in"},
		{[]string{"--ssh", "h", "--ssh-sudo", "--state-dir", "/tmp/s"}, "--state-dir with --ssh-sudo"},
	} {
		_, stderr, code := runCLI(t, context.Background(), nil, append([]string{"autotune", "--dir", t.TempDir()}, c.args...)...)
		if code != ExitError || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("autotune %v: exit %d, stderr %q; want exit 2 and %q in one line", c.args, code, stderr, c.want)
		}
	}
}

// TestAutotuneNetns: with --netns the managed server runs in a network
// namespace of its own and the load comes from another (the lab's target
// kind netns): a net.* sysctl trial writes the server namespace's value,
// not this host's, and the namespaces are gone at the end.
func TestAutotuneNetns(t *testing.T) {
	testutil.NeedRoot(t)
	testutil.HostState(t) // it checks this host's own somaxconn is untouched
	hostBefore := readSysctl(t, "net.core.somaxconn")
	dir := filepath.Join(t.TempDir(), "at")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, errs, code := runCLI(t, ctx, nil, "autotune", "--netns", "--dir", dir, "--seed", "1",
		"--knob", "sysctl.net.core.somaxconn", "--knob", "redis.activerehashing", "--workload", "-t set -c 4 --duration 300ms", "--max-rounds", "8")
	if code != ExitOK && code != ExitFailure || strings.Contains(out, "stopped:") {
		t.Fatalf("autotune: exit %d (want a session run to its end): %s%s", code, out, errs)
	}
	if !strings.Contains(out, "in network namespace rl-") || !strings.Contains(out, "sysctl.net.core.somaxconn = 65535") {
		t.Errorf("answer:\n%s", out)
	}
	res := readAutotuneResult(t, dir)
	var trials []string
	for _, tr := range res.Trials {
		trials = append(trials, tr.Setting.Knob)
	}
	if !slices.Contains(trials, "sysctl.net.core.somaxconn") {
		t.Errorf("no trial of the namespace's somaxconn: %v", trials)
	}
	st, err := tune.Journaled(ctx, tune.StatusOptions{StateDir: filepath.Join(dir, "tune")})
	if err != nil || st.Pending() != 0 {
		t.Errorf("the journal after the session: %v, %v", st, err)
	}
	if got := readSysctl(t, "net.core.somaxconn"); got != hostBefore {
		t.Errorf("this host's somaxconn changed: %s, was %s", got, hostBefore)
	}
	if ns, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(ns), fmt.Sprintf("rl-%d-", os.Getpid())) {
		t.Errorf("the session's namespaces are left: %s", ns)
	}
}

// TestAutotuneTargetJournalsTheLink: the ssh destination and its options
// go into the journaled target, and a resumed session takes them back
// from it (not from its command line); the password never does.
func TestAutotuneTargetJournalsTheLink(t *testing.T) {
	t.Setenv("REDISCLI_AUTH", "not-journaled")
	o := &autotuneOptions{remote: remoteOptions{target: "admin@redis-a", config: "/etc/ssh/alt", noPush: true, heartbeat: 5 * time.Second},
		target: target.Spec{Addr: "10.0.0.5:6379", StateDir: "/var/lib/at"}}
	if err := o.finishTarget(); err != nil {
		t.Fatal(err)
	}
	if o.password != "not-journaled" {
		t.Errorf("password %q, want $REDISCLI_AUTH's", o.password)
	}
	b, _ := json.Marshal(o.target)
	if strings.Contains(string(b), "not-journaled") || !strings.Contains(string(b), `"ssh":"admin@redis-a"`) || !strings.Contains(string(b), `"ssh_heartbeat":5000000000`) {
		t.Errorf("journaled target %s", b)
	}
	r := &autotuneOptions{remote: remoteOptions{target: "another"}, engine: autotune.Options{Resume: true}, addrConfirmed: true}
	if err := json.Unmarshal(b, &r.target); err != nil {
		t.Fatal(err)
	}
	if err := r.finishTarget(); err != nil {
		t.Fatal(err)
	}
	if r.remote != o.remote || r.password != "not-journaled" {
		t.Errorf("resumed link %+v (password %q), want %+v", r.remote, r.password, o.remote)
	}
}

// TestAutotuneAttachedSocket: an existing server by its unix socket: the
// load, the admin connection, the trials' CONFIG SET and their rollback
// all go through the socket, and the server's settings are as found.
func TestAutotuneAttachedSocket(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	srv := redistest.StartWith(t, redisserver.Options{Unix: true})
	dir := filepath.Join(t.TempDir(), "at")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, errs, code := runCLI(t, ctx, nil, "autotune", "--socket", srv.Socket, "--dir", dir, "--seed", "1",
		"--knob", "redis.activerehashing", "--workload", "-t set -c 4 --duration 200ms", "--max-rounds", "8")
	if code != ExitOK && code != ExitFailure || !strings.Contains(out, "redis.activerehashing = no") || strings.Contains(out, "stopped:") {
		t.Fatalf("autotune: exit %d (want a session run to its end): %s%s", code, out, errs)
	}
	if !strings.Contains(out, "target: the existing redis-server at "+srv.Socket) {
		t.Errorf("answer:\n%s", out)
	}
	c := redistest.Client(t, srv)
	if v := redistest.Do(t, c, "CONFIG", "GET", "activerehashing"); len(v.Elems) != 2 || v.Elems[1].Str != "yes" {
		t.Errorf("activerehashing after the session: %+v, want yes as found", v)
	}
	st, err := tune.Journaled(ctx, tune.StatusOptions{StateDir: filepath.Join(dir, "tune")})
	if err != nil || st.Pending() != 0 {
		t.Errorf("the journal after the session: %v, %v", st, err)
	}
}
