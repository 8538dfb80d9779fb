package serverhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"redline/internal/redistest"
	"redline/internal/remote"
	"redline/internal/serverhost"
	"redline/internal/steerspec"
	"redline/internal/testutil"
	"redline/internal/testutil/respscript"
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
	if err := c.Call(ctx, serverhost.OpTuneApply, serverhost.TuneApplyArgs{Plan: somaxconnPlan("1234"), Scoped: true}, &out); err != nil || out.Error != "" {
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
	if err := c.Call(ctx, serverhost.OpTuneApply, serverhost.TuneApplyArgs{Plan: somaxconnPlan("1234"), Scoped: true}, &out); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, serverhost.OpTuneKeep, serverhost.TuneKeepArgs{Session: out.Result.Session}, nil); err != nil {
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
	if err := c.Call(ctx, serverhost.OpTuneApply, serverhost.TuneApplyArgs{Plan: somaxconnPlan("1234"), Scoped: true}, nil); err != nil {
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
		{serverhost.OpDoctor, serverhost.DoctorArgs{Intrinsic: time.Second}, "intrinsic latency"},
		{serverhost.OpTuneApply, serverhost.TuneApplyArgs{Plan: json.RawMessage(`{"version":1,"changes":[{"kind":"sysctl","target":"kernel.core_pattern","value":"|/bin/sh"}]}`)}, "core_pattern"},
		{serverhost.OpTuneApply, map[string]any{"plan": somaxconnPlan("1"), "state_dir": "/etc"}, "unknown field"},
		{serverhost.OpRedisStart, serverhost.RedisStartArgs{Config: []string{"loadmodule /tmp/x.so"}}, "loadmodule"},
		{serverhost.OpRedisStart, serverhost.RedisStartArgs{Config: []string{"dir /etc"}}, "dir"},
		{serverhost.OpRedisStart, serverhost.RedisStartArgs{Bind: "0.0.0.0; rm -rf /"}, "IP address"},
		{serverhost.OpTuneRollback, serverhost.TuneRollbackArgs{Session: "../../x"}, "not a tune session"},
		{serverhost.OpRedisStart, serverhost.RedisStartArgs{Binary: "bin/redis-server"}, "absolute path"},
		{serverhost.OpRedisStart, serverhost.RedisStartArgs{Binary: "/bin/sh"}, "redis-server* executable"},
		{serverhost.OpRedisStart, serverhost.RedisStartArgs{Binary: "/usr/bin/../bin/redis-server"}, "absolute path"},
		{serverhost.OpRedisStart, serverhost.RedisStartArgs{Allocator: "/tmp/evil.so"}, "allocator"},
		{serverhost.OpRedisStart, serverhost.RedisStartArgs{NUMANode: new(-1)}, "numa_node"},
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
	testutil.Need(t, "redis-server")
	c, in, done := pipeSession(t, t.TempDir(), t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const secret = "s3cret-pass"
	var srv remote.RedisServer
	if err := c.Call(ctx, serverhost.OpRedisStart, serverhost.RedisStartArgs{CPUs: "0", Password: secret, Config: []string{"io-threads 1"}}, &srv); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{srv.Pid, os.Getpid()} {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmdline), secret) {
			t.Fatalf("the password is on the command line of pid %d", pid)
		}
	}
	var smp serverhost.Sample
	if err := c.Call(ctx, serverhost.OpSample, struct{}{}, &smp); err != nil {
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
	if err := c1.Call(ctx, serverhost.OpTuneApply, serverhost.TuneApplyArgs{Plan: somaxconnPlan("1234"), Scoped: true}, &out); err != nil {
		t.Fatal(err)
	}
	c2, in2, done2 := pipeSession(t, root, state)
	err := c2.Call(ctx, serverhost.OpTuneApply, serverhost.TuneApplyArgs{Plan: somaxconnPlan("2345"), Scoped: true}, &out)
	if err == nil || !strings.Contains(err.Error(), "in use by a lab's redline session") {
		t.Fatalf("a second lab's apply on a held state directory: %v", err)
	}
	in1.Close()
	<-done1
	if err := c2.Call(ctx, serverhost.OpTuneApply, serverhost.TuneApplyArgs{Plan: somaxconnPlan("2345"), Scoped: true}, &out); err != nil {
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
	testutil.Need(t, "redis-server")
	c, in, done := pipeSession(t, t.TempDir(), t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var srv remote.RedisServer
	if err := c.Call(ctx, serverhost.OpRedisStart, serverhost.RedisStartArgs{}, &srv); err != nil {
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
	spec := steerspec.Spec{DryRun: true, Period: 100 * time.Millisecond}
	var started serverhost.SteerStarted
	if err := c.Call(ctx, serverhost.OpSteerStart, serverhost.SteerStartArgs{Spec: steerspec.Spec{DryRun: true, Period: time.Nanosecond, Sample: 3}, Pid: srv.Pid}, &started); err == nil ||
		!strings.Contains(err.Error(), "steer.period: 1ns: want at least 10ms") || !strings.Contains(err.Error(), "steer.sample: 3") {
		t.Errorf("a steer spec out of range: %v", err)
	}
	err := c.Call(ctx, serverhost.OpSteerStart, serverhost.SteerStartArgs{Spec: spec, Pid: os.Getpid()}, &started)
	if err == nil || !strings.Contains(err.Error(), "not a redis-server started or attached here") {
		t.Fatalf("steer for a process of someone else's: %v", err)
	}
	if err := c.Call(ctx, serverhost.OpSteerStart, serverhost.SteerStartArgs{Spec: spec, Pid: srv.Pid}, &started); err != nil {
		if strings.Contains(err.Error(), "tracefs") || strings.Contains(err.Error(), "perf_event_open") {
			t.Skipf("steer cannot sample here: %v", err)
		}
		t.Fatal(err)
	}
	var second serverhost.SteerStarted
	if err := c.Call(ctx, serverhost.OpSteerStart, serverhost.SteerStartArgs{Spec: spec, Pid: srv.Pid}, &second); err == nil || !strings.Contains(err.Error(), "already runs here") {
		t.Errorf("a second steer beside a running one: %v", err)
	}
	var stopped serverhost.SteerStopResult
	if err := c.Call(ctx, serverhost.OpSteerStop, serverhost.SteerStopArgs{ID: started.ID}, &stopped); err != nil || stopped.Error != "" {
		t.Fatalf("steer.stop: %v %s", err, stopped.Error)
	}
	// How many periods ran depends on the machine's load: the record of a
	// finished dry run is what the session owes (steer's own tests count
	// periods).
	if !stopped.Session.DryRun || stopped.Session.Finished.IsZero() {
		t.Errorf("steer record %+v: want a finished dry run", stopped.Session)
	}
	if err := c.Call(ctx, serverhost.OpSteerStart, serverhost.SteerStartArgs{Spec: spec, Pid: srv.Pid}, &started); err != nil {
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
	var started serverhost.SteerStarted
	spec := steerspec.Spec{DryRun: true, Period: 100 * time.Millisecond}
	if err := c.Call(ctx, serverhost.OpSteerStart, serverhost.SteerStartArgs{Spec: spec, Pid: srv.Pid}, &started); err != nil {
		if strings.Contains(err.Error(), "tracefs") || strings.Contains(err.Error(), "perf_event_open") {
			t.Skipf("steer cannot sample here: %v", err)
		}
		t.Fatal(err)
	}
	if err := c.Call(ctx, serverhost.OpRedisStop, serverhost.RedisStopArgs{ID: srv.ID}, nil); err != nil {
		t.Fatal(err)
	}
	err := c.Call(ctx, serverhost.OpSteerStop, serverhost.SteerStopArgs{ID: started.ID}, nil)
	if err == nil || !strings.Contains(err.Error(), "no steer") {
		t.Errorf("steer.stop after its server's redis.stop: %v, want no such steer", err)
	}
	in.Close()
	if cl := <-done; len(cl.Steered) != 0 || len(cl.Stopped) != 0 {
		t.Fatalf("cleanup %+v: the steer and the server were already stopped", cl)
	}
}

// redisConfigPlan is a plan whose own server (redis.addr) gets hz 11.
func redisConfigPlan(network, addr string) json.RawMessage {
	return json.RawMessage(`{"version":1,"redis":{"network":"` + network + `","addr":"` + addr + `"},` +
		`"changes":[{"kind":"redis-config","target":"hz","value":"11"}]}`)
}

// requests is how many commands a fake server was sent.
func requests(s *respscript.Server) int64 {
	var n int64
	for _, c := range []string{"HELLO", "AUTH", "INFO", "CONFIG", "PING", "CLUSTER", "LATENCY", "CLIENT", "COMMAND"} {
		n += s.Count(c)
	}
	return n
}

// Issue 24, item 4: a session connected to any Redis its client named.
// Now it connects only to the servers it started or was asked to attach:
// a doctor's server, a plan's own redis.addr and a node are refused
// until attached, and the session sends them nothing.
func TestSessionRefusesServersItDidNotStart(t *testing.T) {
	srv := respscript.Start(t, respscript.Options{Config: map[string]string{"hz": "10", "save": "", "appendonly": "no"}})
	c, in, done := pipeSession(t, t.TempDir(), t.TempDir())
	defer func() { in.Close(); <-done }()
	ctx := context.Background()
	target := &serverhost.RedisTarget{Addr: srv.Addr()}
	var raw json.RawMessage
	err := c.Call(ctx, serverhost.OpDoctor, serverhost.DoctorArgs{Redis: target, Only: []string{"expire-cycle-hz"}}, &raw)
	if err == nil || !strings.Contains(err.Error(), "not a server this session started") {
		t.Errorf("doctor of a server the session did not start: %v", err)
	}
	var prev serverhost.TunePreviewResult
	if err := c.Call(ctx, serverhost.OpTunePreview, serverhost.TuneApplyArgs{Plan: redisConfigPlan("tcp", srv.Addr())}, &prev); err == nil {
		t.Errorf("a plan's own redis.addr was reached: %+v", prev.Outcomes)
	}
	nodePlan := json.RawMessage(`{"version":1,"changes":[{"kind":"redis-config","target":"hz","value":"11","node":"` + srv.Addr() + `"}]}`)
	if err := c.Call(ctx, serverhost.OpTunePreview, serverhost.TuneApplyArgs{Plan: nodePlan}, &prev); err == nil {
		t.Errorf("a plan's node was reached: %+v", prev.Outcomes)
	}
	if err := c.Call(ctx, serverhost.OpRedisNodes, serverhost.RedisNodesArgs{Redis: *target}, nil); err == nil {
		t.Error("redis.nodes of a server the session did not start")
	}
	if n := requests(srv); n != 0 {
		t.Fatalf("the session sent the server %d commands before it was attached", n)
	}
	for _, bad := range []serverhost.RedisTarget{{Addr: "192.0.2.1:6379"}, {Addr: "192.0.2.1.nip.invalid:6379"}, {Addr: "0.0.0.0:6379"}} {
		if err := c.Call(ctx, serverhost.OpRedisAttach, serverhost.RedisAttachArgs{Redis: bad, AdmitOnly: true}, nil); err == nil {
			t.Errorf("attached %s, not an address of this host", bad.Addr)
		}
	}
	if err := c.Call(ctx, serverhost.OpRedisAttach, serverhost.RedisAttachArgs{Redis: *target, AdmitOnly: true}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, serverhost.OpTunePreview, serverhost.TuneApplyArgs{Plan: redisConfigPlan("tcp", srv.Addr())}, &prev); err != nil {
		t.Fatalf("preview once attached: %v", err)
	}
	if err := c.Call(ctx, serverhost.OpDoctor, serverhost.DoctorArgs{Redis: target, Only: []string{"expire-cycle-hz"}}, &raw); err != nil ||
		!strings.Contains(string(raw), `"redis_version":"7.2.0"`) {
		t.Fatalf("doctor once attached: %v %.300s", err, raw)
	}
}

// Issue 24, item 4: through `sudo redline session`, a user read the
// settings of a server behind a root-only (0700) directory's socket, by
// naming it as a plan's own server (the session checked only the
// request's target). Every connection is now checked as the invoking
// user ($SUDO_UID) would be by the kernel.
func TestSessionSocketOnlyWhereTheInvokerCould(t *testing.T) {
	testutil.NeedRoot(t)
	base := t.TempDir()
	os.Chmod(base, 0o755)
	os.Chmod(filepath.Dir(base), 0o755) // the test's own temporary root
	private, shared := filepath.Join(base, "private"), filepath.Join(base, "shared")
	os.Mkdir(private, 0o700)
	os.Mkdir(shared, 0o755)
	cfg := map[string]string{"hz": "10", "save": "", "appendonly": "no"}
	rootOnly := respscript.Start(t, respscript.Options{Socket: filepath.Join(private, "redis.sock"), Config: cfg})
	open := respscript.Start(t, respscript.Options{Socket: filepath.Join(shared, "redis.sock"), Config: cfg})
	rootSock, openSock := filepath.Join(private, "redis.sock"), filepath.Join(shared, "redis.sock")
	os.Chmod(rootSock, 0o777)
	os.Chmod(openSock, 0o777)
	link := filepath.Join(shared, "link.sock") // anyone's link to the root-only socket
	os.Symlink(rootSock, link)
	t.Setenv("SUDO_UID", "65534")
	t.Setenv("SUDO_GID", "65534")
	c, in, done := pipeSession(t, t.TempDir(), t.TempDir())
	defer func() { in.Close(); <-done }()
	ctx := context.Background()

	var prev serverhost.TunePreviewResult
	err := c.Call(ctx, serverhost.OpTunePreview, serverhost.TuneApplyArgs{Plan: redisConfigPlan("unix", rootSock)}, &prev)
	if err == nil {
		t.Errorf("a plan's own server behind root's 0700 directory was read: %+v", prev.Outcomes)
	}
	for _, p := range []string{rootSock, link} {
		err := c.Call(ctx, serverhost.OpRedisAttach, serverhost.RedisAttachArgs{Redis: serverhost.RedisTarget{Network: "unix", Addr: p}, AdmitOnly: true}, nil)
		if err == nil || !strings.Contains(err.Error(), "cannot search directory") {
			t.Errorf("attach %s: %v", p, err)
		}
		var raw json.RawMessage
		if err := c.Call(ctx, serverhost.OpDoctor, serverhost.DoctorArgs{Redis: &serverhost.RedisTarget{Network: "unix", Addr: p}}, &raw); err == nil {
			t.Errorf("doctor of %s: a report", p)
		}
	}
	if n := requests(rootOnly); n != 0 {
		t.Fatalf("the session sent the root-only server %d commands", n)
	}
	if err := c.Call(ctx, serverhost.OpRedisAttach, serverhost.RedisAttachArgs{Redis: serverhost.RedisTarget{Network: "unix", Addr: openSock}, AdmitOnly: true}, nil); err != nil {
		t.Fatalf("attach a socket anyone may connect to: %v", err)
	}
	if err := c.Call(ctx, serverhost.OpTunePreview, serverhost.TuneApplyArgs{Plan: redisConfigPlan("unix", openSock)}, &prev); err != nil || requests(open) == 0 {
		t.Fatalf("preview on the attached socket: %v", err)
	}
	os.Chmod(openSock, 0o700) // root's alone from now on: refused at the next connection
	if err := c.Call(ctx, serverhost.OpTunePreview, serverhost.TuneApplyArgs{Plan: redisConfigPlan("unix", openSock)}, &prev); err == nil {
		t.Error("a socket made root's after it was attached was still reached")
	}
}

// The client attaches what a command names before the operations that
// reach it (admit only): a doctor's server, a plan's own server and
// nodes, a cluster's nodes on the session's host. A server that is not
// on the session's host is refused; with the host-only fallback (nobody
// named the server) the report says why.
func TestRemoteAttachesWhatItNames(t *testing.T) {
	srv := respscript.Start(t, respscript.Options{Config: map[string]string{"hz": "10", "save": "", "appendonly": "no"}})
	c, in, done := pipeSession(t, t.TempDir(), t.TempDir())
	defer func() { in.Close(); <-done }()
	ctx := context.Background()
	h := serverhost.NewRemote(c, "pipe")
	rep, err := h.Doctor(ctx, serverhost.DoctorArgs{Redis: &serverhost.RedisTarget{Addr: srv.Addr()}, Only: []string{"expire-cycle-hz"}})
	if err != nil || rep.Target.Version != "7.2.0" {
		t.Fatalf("doctor: %v %+v", err, rep)
	}
	p, err := tune.ParsePlan(redisConfigPlan("tcp", srv.Addr()), ".json")
	if err != nil {
		t.Fatal(err)
	}
	if outs, _, err := h.TunePreview(ctx, p, nil); err != nil || len(outs) != 1 || outs[0].Old != "10" {
		t.Fatalf("preview of the plan's own server: %v %+v", err, outs)
	}
	byName := &serverhost.RedisTarget{Addr: "localhost:" + strconv.Itoa(srv.Port())}
	if rep, err := h.Doctor(ctx, serverhost.DoctorArgs{Redis: byName, Only: []string{"expire-cycle-hz"}}); err != nil || rep.Target.Version != "7.2.0" {
		t.Fatalf("doctor of localhost: %v %+v", err, rep)
	}
	if _, err := h.Doctor(ctx, serverhost.DoctorArgs{Redis: &serverhost.RedisTarget{Addr: "192.0.2.1:6379"}, Only: []string{"expire-cycle-hz"}}); err == nil ||
		!strings.Contains(err.Error(), "not an address of this host") {
		t.Errorf("doctor of a server on another host: %v", err)
	}
	rep, err = h.Doctor(ctx, serverhost.DoctorArgs{Redis: &serverhost.RedisTarget{Addr: "192.0.2.1:6379"}, HostOnlyFallback: true, Only: []string{"expire-cycle-hz"}})
	if err != nil || !strings.Contains(rep.Target.RedisError, "not a server this session started") {
		t.Errorf("the host-only fallback: %v %+v", err, rep)
	}
}

// A cluster's doctor through a session reads every node on the session's
// host: the client attaches the nodes the seed lists.
func TestRemoteDoctorAttachesClusterNodes(t *testing.T) {
	testutil.Heavy(t)
	testutil.Need(t, "redis-server")
	cl := redistest.StartCluster(t, 3, 0)
	c, in, done := pipeSession(t, t.TempDir(), t.TempDir())
	defer func() { in.Close(); <-done }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := serverhost.NewRemote(c, "pipe").Doctor(ctx, serverhost.DoctorArgs{Redis: &serverhost.RedisTarget{Addr: cl.Seed()}, Only: []string{"cluster-coverage"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Nodes) != 3 {
		t.Fatalf("nodes %+v, want 3", rep.Nodes)
	}
	for _, n := range rep.Nodes {
		if n.Error != "" {
			t.Errorf("node %s: %s", n.Addr, n.Error)
		}
	}
}
