package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"redline/internal/labdata"
	"redline/internal/redisserver"
	"redline/internal/testutil"
	"redline/internal/testutil/sshtest"
	"redline/internal/tune"
)

// sshLab is a lab run from the client namespace of an sshtest pair
// against its sshd: this test binary is the lab (REDLINE_TEST_MAIN) and,
// pushed into the server host's cache, the session there (sshd sets
// REDLINE_TEST_MAIN and a HOME of the test's own).
type sshLab struct {
	h               *sshtest.Hosts
	dir, state, out string
	knob            string // a sysctl of the server namespace's own
	before, want    string
}

func newSSHLab(t *testing.T) *sshLab {
	t.Helper()
	testutil.Heavy(t)
	testutil.Need(t, "redis-server")
	home := t.TempDir()
	h := sshtest.New(t, sshtest.Options{SetEnv: []string{"HOME=" + home, "REDLINE_TEST_MAIN=1"}})
	l := &sshLab{h: h, dir: t.TempDir(), knob: "/proc/sys/net/core/somaxconn"}
	l.state, l.out = filepath.Join(l.dir, "state"), filepath.Join(l.dir, "out")
	l.before = h.ReadServerFile(t, l.knob)
	l.want = "1234"
	if l.before == l.want {
		l.want = "1235"
	}
	return l
}

// command is the lab over ssh with a tuned variant (somaxconn) and the
// given workload line.
func (l *sshLab) command(t *testing.T, ctx context.Context, bench, heartbeat string) *exec.Cmd {
	return l.commandAs(t, ctx, bench, heartbeat, "user", "host")
}

// commandAs is command with the ssh identity and trusted host key given.
func (l *sshLab) commandAs(t *testing.T, ctx context.Context, bench, heartbeat, identity, hostKey string) *exec.Cmd {
	t.Helper()
	plan := filepath.Join(l.dir, "plan.yaml")
	os.WriteFile(plan, []byte("version: 1\nchanges:\n  - {kind: sysctl, target: net.core.somaxconn, value: \""+l.want+"\"}\n"), 0o644)
	return l.scenario(t, ctx, fmt.Sprintf(`
name: two-hosts
target: {kind: ssh, host: srv, heartbeat: %s}
workloads: [{name: set, bench: "%s"}]
variants:
  - {name: baseline, baseline: true}
  - {name: tuned, tune: {plan: %s}}
  - {name: pinned, server: {cpus: "0"}}
  - {name: steered, steer: {dry_run: true, period: 200ms}}
repetitions: 1
`, heartbeat, bench, plan), identity, hostKey)
}

// scenario is the lab of this scenario, from the client namespace.
func (l *sshLab) scenario(t *testing.T, ctx context.Context, yaml, identity, hostKey string) *exec.Cmd {
	t.Helper()
	scenario := filepath.Join(l.dir, "s.yaml")
	os.WriteFile(scenario, []byte(yaml), 0o644)
	cmd := exec.CommandContext(ctx, "ip", "netns", "exec", l.h.Pair.Client, os.Args[0], "lab", scenario, "-o", l.out,
		"--state-dir", l.state, "--ssh-config", l.h.Config(t, identity, hostKey), "--progress", "plain")
	cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1")
	return cmd
}

func (l *sshLab) result(t *testing.T) *labdata.Result {
	t.Helper()
	res, err := labdata.ReadResult(filepath.Join(l.out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// checkRestored checks that the server host's journal holds nothing and
// its sysctl is back.
func (l *sshLab) checkRestored(t *testing.T) {
	t.Helper()
	if got := l.h.ReadServerFile(t, l.knob); got != l.before {
		t.Errorf("somaxconn on the server host %s, want %s restored", got, l.before)
	}
	st, err := tune.Journaled(context.Background(), tune.StatusOptions{StateDir: l.state})
	if err != nil || st.Pending() != 0 {
		t.Errorf("the server host's journal: %d pending, %v", st.Pending(), err)
	}
}

// serverRedis reports whether a redis-server runs in the server namespace.
func (l *sshLab) serverRedis(t *testing.T) bool {
	t.Helper()
	out, err := exec.Command("ip", "netns", "pids", l.h.Pair.Server).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range strings.Fields(string(out)) {
		if comm, _ := os.ReadFile("/proc/" + pid + "/comm"); strings.TrimSpace(string(comm)) == "redis-server" {
			return true
		}
	}
	return false
}

// TestLabSSHEndToEnd: a lab of kind ssh starts its redis-server on the
// "server host" (pushing this redline there first), diagnoses it there,
// applies the tuned variant there (the namespace's own somaxconn, not
// this host's), restarts the server pinned there for the pinned variant,
// measures from the client namespace, rolls back, stops the server, and
// records both hosts.
func TestLabSSHEndToEnd(t *testing.T) {
	l := newSSHLab(t)
	hostBefore := readSysctl(t, "net.core.somaxconn")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := l.command(t, ctx, "-t set -c 2 -n 3000", "10s")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("lab: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "copying this redline") {
		t.Errorf("no word of the push: %s", stderr.String())
	}
	res := l.result(t)
	tg := res.Target
	if !res.Complete || tg.Kind != "ssh" || tg.SSH != "srv" || tg.Session == "" || !strings.HasPrefix(tg.Address, l.h.Pair.ServerIP+":") {
		t.Fatalf("result: complete %v, target %+v", res.Complete, tg)
	}
	if res.ServerHost == nil || res.ServerHost.Kernel == "" || res.ServerHost.CPUs == 0 {
		t.Fatalf("server host facts %+v", res.ServerHost)
	}
	if len(res.Runs) != 4 || len(res.Variants) != 4 || !res.Variants[1].RolledBack || len(res.Variants[1].Plan) != 1 || res.Variants[1].Plan[0].Old != l.before {
		t.Fatalf("runs %d, tuned variant %+v", len(res.Runs), res.Variants[1])
	}
	// The listen queue's counters were read on the server host, through
	// its session: its somaxconn, as each run found it.
	for _, run := range res.Runs {
		k := run.Summary.Connections.Kernel
		if k == nil || k.Server == nil || k.Server.Somaxconn == nil {
			t.Fatalf("run %d: no server-side connection evidence: %+v", run.Seq, k)
		}
		if want := l.before; run.Variant == "tuned" {
			want = l.want
			if got := strconv.FormatInt(*k.Server.Somaxconn, 10); got != want {
				t.Errorf("run %d (%s): the server host's somaxconn read as %s, want %s", run.Seq, run.Variant, got, want)
			}
		}
	}
	// steer ran on the server host, through the session, for its variant.
	if st := res.Variants[3].Steer; len(st) != 1 || !st[0].DryRun || st[0].Finished.IsZero() || st[0].RestoreError != "" {
		t.Fatalf("the steered variant's steer sessions: %+v", st)
	}
	if len(tg.Logs) < 2 || res.RemoteCleanup != nil {
		t.Fatalf("logs %v (want the server's), remote cleanup %+v (want none)", tg.Logs, res.RemoteCleanup)
	}
	l.checkRestored(t)
	if l.serverRedis(t) {
		t.Errorf("a redis-server still runs on the server host")
	}
	if got := readSysctl(t, "net.core.somaxconn"); got != hostBefore {
		t.Fatalf("this host's somaxconn changed: %s, was %s", got, hostBefore)
	}
}

// TestLabSSHLinkCut: the link goes down during the tuned variant. The
// server host's session rolls the variant back and stops its server by
// itself within its heartbeat timeout; when the link is back, the lab
// learns what it did and says so.
func TestLabSSHLinkCut(t *testing.T) {
	l := newSSHLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := l.command(t, ctx, "-t set -c 2 --duration 20s", "3s")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tuned variant applied on the server host", func() bool { return l.h.ReadServerFile(t, l.knob) == l.want })
	link := func(state string) {
		if out, err := exec.Command("ip", "-n", l.h.Pair.Client, "link", "set", l.h.Pair.ClientIf, state).CombinedOutput(); err != nil {
			t.Fatalf("link %s: %v: %s", state, err, out)
		}
	}
	link("down")
	waitFor(t, "the server host restored somaxconn by itself", func() bool { return l.h.ReadServerFile(t, l.knob) == l.before })
	waitFor(t, "the server host stopped its redis-server", func() bool { return !l.serverRedis(t) })
	link("up")
	err := cmd.Wait()
	if err == nil {
		t.Fatalf("the lab exited 0 after losing the link: %s", stderr.String())
	}
	res := l.result(t)
	rc := res.RemoteCleanup
	if res.Complete || rc == nil || !strings.Contains(rc.Reason, "no heartbeat") || len(rc.Restored) != 1 || len(rc.Stopped) != 1 {
		t.Fatalf("remote cleanup %+v (complete %v)\n%s", rc, res.Complete, stderr.String())
	}
	if !strings.Contains(stderr.String(), "restored 1 change(s) and stopped 1 redis-server(s) by itself") {
		t.Errorf("the lab does not say what the server host did: %s", stderr.String())
	}
	if !res.Variants[1].RolledBack {
		t.Errorf("the tuned variant is not recorded as rolled back: %+v", res.Variants[1])
	}
	l.checkRestored(t)
	t.Logf("lab: %s", stderr.String())
}

// waitFor polls cond (up to 3 minutes: a condition, not a timing).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 3m for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestLabSSHRefused: a wrong host key, or a key the server refuses, stops
// the lab with ssh's own reason before anything runs there: no push, no
// journal, no server.
func TestLabSSHRefused(t *testing.T) {
	l := newSSHLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, tc := range []struct{ identity, hostKey, want string }{
		{"user", "otherhost", "Host key verification failed"},
		{"stranger", "host", "Permission denied"},
	} {
		cmd := l.commandAs(t, ctx, "-t set -n 100", "5s", tc.identity, tc.hostKey)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "copying") {
			t.Errorf("%s/%s: %v, want an error with %q and no push:\n%s", tc.identity, tc.hostKey, err, tc.want, out)
		}
		if _, err := os.Stat(l.state); !os.IsNotExist(err) {
			t.Errorf("the server host's journal directory exists (%v)", err)
		}
		if l.serverRedis(t) {
			t.Errorf("a redis-server runs on the server host")
		}
	}
}

// TestLabSSHExistingServer: with port, the lab measures a server already
// running on the server host: it checks its pid there, diagnoses it, and
// leaves it running and unflushed.
func TestLabSSHExistingServer(t *testing.T) {
	l := newSSHLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	srv, err := redisserver.Start(ctx, redisserver.Options{NetNS: l.h.Pair.Server, Bind: l.h.Pair.ServerIP})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	cmd := l.scenario(t, ctx, fmt.Sprintf(`
name: existing
target: {kind: ssh, host: srv, port: %d}
workloads: [{name: set, bench: "-t set -c 2 -n 2000"}]
repetitions: 1
`, srv.Port), "user", "host")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("lab: %v\n%s", err, out)
	}
	res := l.result(t)
	if !res.Complete || res.Target.Address != fmt.Sprintf("%s:%d", l.h.Pair.ServerIP, srv.Port) || len(res.Target.Logs) != 0 || res.ServerHost == nil {
		t.Fatalf("result: complete %v, target %+v", res.Complete, res.Target)
	}
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", srv.Pid())); strings.TrimSpace(string(comm)) != "redis-server" {
		t.Fatal("the lab stopped a server it did not start")
	}
}

// TestLabSSHInterrupted: Ctrl-C at the terminal (SIGINT to the lab's
// whole process group, ssh included) during the tuned variant: the lab
// still rolls back over its session in order, and says the host is
// restored; nothing was left to the server host's own switch.
func TestLabSSHInterrupted(t *testing.T) {
	l := newSSHLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := l.command(t, ctx, "-t set -c 2 --duration 30s", "10s")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := testutil.StartSignallable(cmd); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tuned variant applied on the server host", func() bool { return l.h.ReadServerFile(t, l.knob) == l.want })
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitSignaled {
		t.Fatalf("lab: %v, want exit %d:\n%s", err, ExitSignaled, stderr.String())
	}
	res := l.result(t)
	if res.RemoteCleanup != nil || !res.Variants[1].RolledBack {
		t.Fatalf("remote cleanup %+v, tuned rolled back %v (want the lab's own rollback):\n%s", res.RemoteCleanup, res.Variants[1].RolledBack, stderr.String())
	}
	l.checkRestored(t)
	if l.serverRedis(t) {
		t.Error("a redis-server still runs on the server host")
	}
}
