package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"redline/internal/redisserver"
	"redline/internal/resp"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// autotune is redline autotune over ssh from the client namespace of the
// sshtest pair (the lab's two hosts: sshLab), its journal there in
// l.state.
func (l *sshLab) autotune(t *testing.T, ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	argv := append([]string{"netns", "exec", l.h.Pair.Client, os.Args[0], "autotune", "--ssh", "srv",
		"--ssh-config", l.h.Config(t, "user", "host"), "--state-dir", l.state, "--dir", filepath.Join(l.dir, "at"), "--seed", "1"}, args...)
	cmd := exec.CommandContext(ctx, "ip", argv...)
	cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1")
	return cmd
}

// TestAutotuneSSHEndToEnd: a session against a server host over ssh
// starts its redis-server there on the ssh connection's address, loads
// it from the client namespace, tries a sysctl of the server host (its
// namespace's own somaxconn) and a Redis setting through the session,
// runs to its answer and leaves the server host as found: journal
// empty, sysctl back, no server, this host's somaxconn untouched.
func TestAutotuneSSHEndToEnd(t *testing.T) {
	l := newSSHLab(t)
	testutil.HostState(t) // it checks this host's own somaxconn is untouched
	hostBefore := readSysctl(t, "net.core.somaxconn")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := l.autotune(t, ctx, "--knob", "sysctl.net.core.somaxconn", "--knob", "redis.activerehashing",
		"--workload", "-t set -c 2 --duration 300ms", "--max-rounds", "8")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != ExitFailure) || strings.Contains(out.String(), "stopped:") {
		t.Fatalf("autotune: %v (want a session run to its end)\n%s", err, out.String())
	}
	t.Logf("autotune over ssh:\n%s", out.String())
	for _, want := range []string{"target: a managed redis-server at " + l.h.Pair.ServerIP + ":", "sysctl.net.core.somaxconn = 65535", "redis.activerehashing = no", "confirm"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the answer", want)
		}
	}
	res := readAutotuneResult(t, filepath.Join(l.dir, "at"))
	if len(res.Trials) < 2 || res.Noise.Rounds == 0 {
		t.Errorf("noise %+v, trials %+v: want the noise and a trial of each knob", res.Noise, res.Trials)
	}
	l.checkRestored(t)
	if l.serverRedis(t) {
		t.Error("a redis-server still runs on the server host")
	}
	if got := readSysctl(t, "net.core.somaxconn"); got != hostBefore {
		t.Fatalf("this host's somaxconn changed: %s, was %s", got, hostBefore)
	}
}

// TestAutotuneSSHLinkCut: autotune of an existing server on the server
// host, over ssh, is stopped while a trial's CONFIG SET is applied and
// measured, and the link goes down. The session there rolls the trial
// back by itself within its heartbeat timeout, with no further command
// from here: the server's hz is back at the baseline and the journal
// empty; the server itself (not autotune's) runs on, its data kept. When
// the link is back, autotune ends with an error that says what the
// server host does.
func TestAutotuneSSHLinkCut(t *testing.T) {
	l := newSSHLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	srv, err := redisserver.Start(ctx, redisserver.Options{NetNS: l.h.Pair.Server, Bind: l.h.Pair.ServerIP})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := srv.Client(ctx) // from inside the server namespace: reachable with the link down
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	do := func(args ...string) resp.Value {
		v, err := c.Do(ctx, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return v
	}
	hz := func() string {
		v := do("CONFIG", "GET", "hz")
		if len(v.Elems) != 2 {
			t.Fatalf("CONFIG GET hz: %+v", v)
		}
		return v.Elems[1].Str
	}
	do("SET", "someones-key", "1")
	before := hz()
	cmd := l.autotune(t, ctx, "--addr", srv.Addr(), "--knob", "redis.hz", "--ssh-heartbeat", "3s",
		"--workload", "-t set -c 2 --duration 1s", "--max-rounds", "8")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Catch autotune with a trial applied: stopped (SIGSTOP) it can
	// neither roll back nor send a heartbeat, so whatever restores the
	// server from then on is the server host's session by itself.
	pid := cmd.Process.Pid     // ip netns exec execs redline
	measuring := func() bool { // the bench's two connections beside autotune's and this one
		v := do("CLIENT", "LIST")
		return strings.Count(v.Str, "\n") >= 4
	}
	for {
		waitFor(t, "a trial's hz applied and measured on the server", func() bool { return hz() != before && measuring() })
		syscall.Kill(pid, syscall.SIGSTOP)
		if hz() != before {
			break
		}
		syscall.Kill(pid, syscall.SIGCONT) // it rolled back just before: the next trial
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	link := func(state string) {
		if out, err := exec.Command("ip", "-n", l.h.Pair.Client, "link", "set", l.h.Pair.ClientIf, state).CombinedOutput(); err != nil {
			t.Fatalf("link %s: %v: %s", state, err, out)
		}
	}
	link("down")
	cut := time.Now()
	waitFor(t, "the server host's session restored hz by itself", func() bool { return hz() == before })
	t.Logf("hz restored by the server host's session %s after the link went down (heartbeat timeout 3s)", time.Since(cut).Round(10*time.Millisecond))
	// The session writes the old value back, then records it in its
	// journal: wait for the record too, not only for the value.
	waitFor(t, "the server host's journal to record the rollback", func() bool {
		st, err := tune.Journaled(ctx, tune.StatusOptions{StateDir: l.state})
		return err == nil && st.Pending() == 0
	})
	link("up")
	syscall.Kill(pid, syscall.SIGCONT)
	err = cmd.Wait()
	if err == nil {
		t.Fatalf("autotune exited 0 after losing the link:\n%s", out.String())
	}
	// The trial's own rollback could not reach the session: said, not
	// dropped.
	if !strings.Contains(out.String(), "trial of redis.hz=") || !strings.Contains(out.String(), "tune.rollback") || !strings.Contains(out.String(), "the link to srv was lost") {
		t.Errorf("autotune does not say its trial's rollback failed on the lost link:\n%s", out.String())
	}
	if v := do("EXISTS", "someones-key"); v.Str != "1" {
		t.Error("the attached server's data was flushed")
	}
	if hz() != before {
		t.Errorf("hz %s at the end, want %s", hz(), before)
	}
	t.Logf("autotune:\n%s", out.String())
}

// TestAutotuneSSHPlantedFix: a real session of minutes over ssh: the
// managed server on the server host starts with a slow log of every
// command (about -30% of pipelined SET throughput here: docs/benchmarks.md,
// Autotune); autotune, loading it from the client namespace, runs to its
// confirmation (confirmed, or not confirmed when the shared machine is too
// noisy to prove it) and leaves the server host as found.
func TestAutotuneSSHPlantedFix(t *testing.T) {
	if os.Getenv("REDLINE_AUTOTUNE_REAL") != "1" {
		t.Skip("a real session of minutes: REDLINE_AUTOTUNE_REAL=1")
	}
	l := newSSHLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cmd := l.autotune(t, ctx, "--server-config", "slowlog-log-slower-than 0", "--server-config", "slowlog-max-len 100000",
		"--knob", "redis.slowlog-log-slower-than", "--workload", "-t set -c 20 -P 16 --duration 2s --warmup 100ms",
		"--max-rounds", "40", "--budget", "12m")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("autotune over ssh:\n%s", out.String())
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != ExitFailure) {
		t.Fatalf("autotune: %v", err)
	}
	res := readAutotuneResult(t, filepath.Join(l.dir, "at"))
	if res.Confirmation == nil && len(res.Final) > 0 {
		t.Errorf("a kept plan was not put to its confirmation: %+v", res)
	}
	l.checkRestored(t)
	if l.serverRedis(t) {
		t.Error("a redis-server still runs on the server host")
	}
}
