package serverhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"redline/internal/labdata"
	"redline/internal/remote"
	"redline/internal/serverhost"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// pipeSession runs a session on pipes with a rehearsal tree as its machine.
func pipeSession(t *testing.T, root, state string) (*remote.Client, io.Closer, <-chan *remote.Cleanup) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan *remote.Cleanup, 1)
	go func() {
		done <- serverhost.Serve(context.Background(), inR, outW, serverhost.ServeOptions{
			Version: "test", StateDir: state, System: func() *tune.System { return tune.RehearsalSystem(root) }})
		outW.Close()
	}()
	return remote.NewClient(outR, inW, nil), inW, done
}

func somaxconnPlan(v string) json.RawMessage {
	return json.RawMessage(`{"version":1,"changes":[{"kind":"sysctl","target":"net.core.somaxconn","value":"` + v + `"}]}`)
}

func readSomaxconn(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "proc/sys/net/core/somaxconn"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestSessionInputClosedRollsBack: a scoped apply is undone when the
// client's input ends without bye, and the next hello reports it.
func TestSessionInputClosedRollsBack(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"proc/sys/net/core/somaxconn": "4096\n"})
	state := t.TempDir()
	ctx := context.Background()
	c, in, done := pipeSession(t, root, state)
	if err := c.Handshake(ctx, "test", 0, 0); err != nil {
		t.Fatal(err)
	}
	var out serverhost.TuneApplyResult
	if err := c.Call(ctx, remote.OpTuneApply, remote.TuneApplyArgs{Plan: somaxconnPlan("1234"), Scoped: true}, &out); err != nil || out.Error != "" {
		t.Fatal(err, out.Error)
	}
	res := out.Result
	if got := readSomaxconn(t, root); got != "1234" {
		t.Fatalf("after apply: somaxconn %s, want 1234", got)
	}
	in.Close()
	cl := <-done
	if got := readSomaxconn(t, root); got != "4096" {
		t.Fatalf("after the input closed: somaxconn %s, want 4096", got)
	}
	if len(cl.Restored) != 1 || cl.Restored[0].TuneSession != res.Session {
		t.Fatalf("cleanup %+v, want the apply %s restored", cl, res.Session)
	}
	c2, in2, done2 := pipeSession(t, root, state)
	if err := c2.Handshake(ctx, "test", 0, 0); err != nil {
		t.Fatal(err)
	}
	if len(c2.Hello.Cleanups) != 1 || c2.Hello.Cleanups[0].Restored[0].Steps[0].Status != string(tune.StatusRestored) {
		t.Fatalf("next hello's cleanups: %+v", c2.Hello.Cleanups)
	}
	if err := c2.Bye(ctx); err != nil {
		t.Fatal(err)
	}
	in2.Close()
	<-done2
}

// TestSessionKeep: a scoped apply that the client keeps stays when the
// session ends.
func TestSessionKeep(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"proc/sys/net/core/somaxconn": "4096\n"})
	c, in, done := pipeSession(t, root, t.TempDir())
	ctx := context.Background()
	var out serverhost.TuneApplyResult
	if err := c.Call(ctx, remote.OpTuneApply, remote.TuneApplyArgs{Plan: somaxconnPlan("1234"), Scoped: true}, &out); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, remote.OpTuneKeep, remote.TuneKeepArgs{Session: out.Result.Session}, nil); err != nil {
		t.Fatal(err)
	}
	in.Close()
	if cl := <-done; len(cl.Restored) != 0 {
		t.Fatalf("cleanup restored %+v after keep", cl.Restored)
	}
	if got := readSomaxconn(t, root); got != "1234" {
		t.Fatalf("somaxconn %s after a kept apply, want 1234", got)
	}
}

// TestSessionHeartbeatTimeout: a client that stops talking (its input
// still open, as when the link is cut) is rolled back after the timeout.
func TestSessionHeartbeatTimeout(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"proc/sys/net/core/somaxconn": "4096\n"})
	c, in, done := pipeSession(t, root, t.TempDir())
	defer in.Close()
	ctx := context.Background()
	if err := c.Call(ctx, remote.OpHello, remote.HelloArgs{Version: "test", HeartbeatTimeout: time.Second}, &c.Hello); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, remote.OpTuneApply, remote.TuneApplyArgs{Plan: somaxconnPlan("1234"), Scoped: true}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case cl := <-done:
		if !strings.Contains(cl.Reason, "heartbeat") || len(cl.Restored) != 1 {
			t.Fatalf("cleanup %+v", cl)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the session did not end without heartbeats")
	}
	if got := readSomaxconn(t, root); got != "4096" {
		t.Fatalf("somaxconn %s, want 4096", got)
	}
}

// TestSessionRefuses: operations and values outside the protocol are
// errors, and nothing is applied.
func TestSessionRefuses(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"proc/sys/net/core/somaxconn": "4096\n"})
	c, in, done := pipeSession(t, root, t.TempDir())
	ctx := context.Background()
	cases := []struct {
		op   string
		args any
		want string
	}{
		{"exec", map[string]string{"cmd": "id"}, "unknown operation"},
		{remote.OpHello, remote.HelloArgs{Version: "other"}, "redline versions differ"},
		{remote.OpDoctor, remote.DoctorArgs{Intrinsic: time.Second}, "intrinsic latency"},
		{remote.OpTuneApply, remote.TuneApplyArgs{Plan: json.RawMessage(`{"version":1,"changes":[{"kind":"sysctl","target":"kernel.core_pattern","value":"|/bin/sh"}]}`)}, "core_pattern"},
		{remote.OpTuneApply, map[string]any{"plan": somaxconnPlan("1"), "state_dir": "/etc"}, "unknown field"},
		{remote.OpRedisStart, remote.RedisStartArgs{Config: []string{"loadmodule /tmp/x.so"}}, "loadmodule"},
		{remote.OpRedisStart, remote.RedisStartArgs{Config: []string{"dir /etc"}}, "dir"},
		{remote.OpRedisStart, remote.RedisStartArgs{Bind: "0.0.0.0; rm -rf /"}, "IP address"},
		{remote.OpTuneRollback, remote.TuneRollbackArgs{Session: "../../x"}, "not a tune session"},
		{remote.OpRedisStart, remote.RedisStartArgs{Binary: "bin/redis-server"}, "absolute path"},
		{remote.OpRedisStart, remote.RedisStartArgs{Binary: "/bin/sh"}, "redis-server* executable"},
		{remote.OpRedisStart, remote.RedisStartArgs{Binary: "/usr/bin/../bin/redis-server"}, "absolute path"},
		{remote.OpRedisStart, remote.RedisStartArgs{Allocator: "/tmp/evil.so"}, "allocator"},
		{remote.OpRedisStart, remote.RedisStartArgs{NUMANode: new(-1)}, "numa_node"},
	}
	for _, tc := range cases {
		err := c.Call(ctx, tc.op, tc.args, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: error %v, want one containing %q", tc.op, tc.args, err, tc.want)
		}
	}
	if got := readSomaxconn(t, root); got != "4096" {
		t.Fatalf("somaxconn %s, want 4096", got)
	}
	in.Close()
	<-done
}

// TestSessionRedisServer: a started server is pinned and password-protected
// without the password on any command line, and stopped when the session
// ends.
func TestSessionRedisServer(t *testing.T) {
	testutil.Heavy(t)
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	c, in, done := pipeSession(t, t.TempDir(), t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const secret = "s3cret-pass"
	var srv remote.RedisServer
	if err := c.Call(ctx, remote.OpRedisStart, remote.RedisStartArgs{CPUs: "0", Password: secret, Config: []string{"io-threads 1"}}, &srv); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{srv.Pid, os.Getpid()} {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmdline), secret) {
			t.Fatalf("the password is on the command line of pid %d", pid)
		}
	}
	var smp serverhost.Sample
	if err := c.Call(ctx, remote.OpSample, struct{}{}, &smp); err != nil {
		t.Fatal(err)
	}
	if _, ok := smp.Files[fmt.Sprintf("/proc/%d/stat", srv.Pid)]; !ok {
		t.Fatalf("the sample lacks the server's stat: %v", smp.Errors)
	}
	in.Close()
	cl := <-done
	if len(cl.Stopped) != 1 || testutil.ProcessAlive(srv.Pid) {
		t.Fatalf("cleanup %+v; server alive %v", cl, testutil.ProcessAlive(srv.Pid))
	}
}

// TestSessionHoldsStateDirForALab: a lab's session (a scoped apply) holds
// the state directory until it ends, so a second lab's session on the same
// host is refused instead of interleaving its changes in the journal; once
// the first ends, the second may apply.
func TestSessionHoldsStateDirForALab(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"proc/sys/net/core/somaxconn": "4096\n"})
	state := t.TempDir()
	ctx := context.Background()
	c1, in1, done1 := pipeSession(t, root, state)
	var out serverhost.TuneApplyResult
	if err := c1.Call(ctx, remote.OpTuneApply, remote.TuneApplyArgs{Plan: somaxconnPlan("1234"), Scoped: true}, &out); err != nil {
		t.Fatal(err)
	}
	c2, in2, done2 := pipeSession(t, root, state)
	err := c2.Call(ctx, remote.OpTuneApply, remote.TuneApplyArgs{Plan: somaxconnPlan("2345"), Scoped: true}, &out)
	if err == nil || !strings.Contains(err.Error(), "in use by a lab's redline session") {
		t.Fatalf("a second lab's apply on a held state directory: %v", err)
	}
	in1.Close()
	<-done1
	if err := c2.Call(ctx, remote.OpTuneApply, remote.TuneApplyArgs{Plan: somaxconnPlan("2345"), Scoped: true}, &out); err != nil {
		t.Fatalf("after the first session ended: %v", err)
	}
	in2.Close()
	<-done2
	if got := readSomaxconn(t, root); got != "4096" {
		t.Fatalf("somaxconn %s after both sessions, want 4096", got)
	}
}

// steerSession is a session on a temporary tree with a redis-server it
// started, for the steer tests (root, a real server).
func steerSession(t *testing.T) (*remote.Client, io.Closer, <-chan *remote.Cleanup, remote.RedisServer) {
	t.Helper()
	testutil.Heavy(t)
	testutil.NeedRoot(t)
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	c, in, done := pipeSession(t, t.TempDir(), t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var srv remote.RedisServer
	if err := c.Call(ctx, remote.OpRedisStart, remote.RedisStartArgs{}, &srv); err != nil {
		in.Close()
		t.Fatal(err)
	}
	return c, in, done, srv
}

// TestSessionSteer: a lab's steer variant against a server host runs steer
// there through the session, for a server of the session's own only; a
// steer left running when the link goes is stopped (its IRQs restored) by
// the session's cleanup, which says so.
func TestSessionSteer(t *testing.T) {
	c, in, done, srv := steerSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	spec := labdata.SteerSpec{DryRun: true, Period: 100 * time.Millisecond}
	var started remote.SteerStarted
	if err := c.Call(ctx, remote.OpSteerStart, remote.SteerStartArgs{Spec: labdata.SteerSpec{DryRun: true, Period: time.Nanosecond, Sample: 3}, Pid: srv.Pid}, &started); err == nil ||
		!strings.Contains(err.Error(), "steer.period: 1ns: want at least 10ms") || !strings.Contains(err.Error(), "steer.sample: 3") {
		t.Errorf("a steer spec out of range: %v", err)
	}
	err := c.Call(ctx, remote.OpSteerStart, remote.SteerStartArgs{Spec: spec, Pid: os.Getpid()}, &started)
	if err == nil || !strings.Contains(err.Error(), "not a redis-server started or attached here") {
		t.Fatalf("steer for a process of someone else's: %v", err)
	}
	if err := c.Call(ctx, remote.OpSteerStart, remote.SteerStartArgs{Spec: spec, Pid: srv.Pid}, &started); err != nil {
		if strings.Contains(err.Error(), "tracefs") || strings.Contains(err.Error(), "perf_event_open") {
			t.Skipf("steer cannot sample here: %v", err)
		}
		t.Fatal(err)
	}
	var second remote.SteerStarted
	if err := c.Call(ctx, remote.OpSteerStart, remote.SteerStartArgs{Spec: spec, Pid: srv.Pid}, &second); err == nil || !strings.Contains(err.Error(), "already runs here") {
		t.Errorf("a second steer beside a running one: %v", err)
	}
	var stopped remote.SteerStopResult
	if err := c.Call(ctx, remote.OpSteerStop, remote.SteerStopArgs{ID: started.ID}, &stopped); err != nil || stopped.Error != "" {
		t.Fatalf("steer.stop: %v %s", err, stopped.Error)
	}
	// How many periods ran depends on the machine's load: the record of a
	// finished dry run is what the session owes (steer's own tests count
	// periods).
	if !stopped.Session.DryRun || stopped.Session.Finished.IsZero() {
		t.Errorf("steer record %+v: want a finished dry run", stopped.Session)
	}
	if err := c.Call(ctx, remote.OpSteerStart, remote.SteerStartArgs{Spec: spec, Pid: srv.Pid}, &started); err != nil {
		t.Fatal(err)
	}
	in.Close() // the link goes with steer running
	cl := <-done
	if len(cl.Steered) != 1 || len(cl.Stopped) != 1 || len(cl.Errors) != 0 {
		t.Fatalf("cleanup %+v: want the running steer and the server stopped", cl)
	}
}

// TestSessionRedisStopStopsSteer: stopping a server stops the steer
// running for it first (restoring its IRQs), instead of leaving it to
// move IRQs for a process that is gone until the session ends.
func TestSessionRedisStopStopsSteer(t *testing.T) {
	c, in, done, srv := steerSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var started remote.SteerStarted
	spec := labdata.SteerSpec{DryRun: true, Period: 100 * time.Millisecond}
	if err := c.Call(ctx, remote.OpSteerStart, remote.SteerStartArgs{Spec: spec, Pid: srv.Pid}, &started); err != nil {
		if strings.Contains(err.Error(), "tracefs") || strings.Contains(err.Error(), "perf_event_open") {
			t.Skipf("steer cannot sample here: %v", err)
		}
		t.Fatal(err)
	}
	if err := c.Call(ctx, remote.OpRedisStop, remote.RedisStopArgs{ID: srv.ID}, nil); err != nil {
		t.Fatal(err)
	}
	err := c.Call(ctx, remote.OpSteerStop, remote.SteerStopArgs{ID: started.ID}, nil)
	if err == nil || !strings.Contains(err.Error(), "no steer") {
		t.Errorf("steer.stop after its server's redis.stop: %v, want no such steer", err)
	}
	in.Close()
	if cl := <-done; len(cl.Steered) != 0 || len(cl.Stopped) != 0 {
		t.Fatalf("cleanup %+v: the steer and the server were already stopped", cl)
	}
}
