package remote_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"redline/internal/profile"
	"redline/internal/redisadmin"
	"redline/internal/remote"
	"redline/internal/serverhost"
	"redline/internal/testutil"
	"redline/internal/testutil/sshtest"
	"redline/internal/tune"
)

// The tests below play two hosts: a network namespace runs a real sshd
// (the "server host"), and the client side runs ssh from the other end
// of a veth link. The remote redline is built by the test.

const (
	versionA = "rl-test-A" // the client's version, and its binary's
	versionB = "rl-test-B" // another version, installed "remotely"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds redline twice, as versions A and B.
func binaries(t testing.TB) (a, b string) {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "redline-remote-bin-")
		if buildErr != nil {
			return
		}
		gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
		for _, v := range []string{versionA, versionB} {
			cmd := exec.Command(gobin, "build", "-o", filepath.Join(binDir, v), "-ldflags", "-X redline/internal/cli.version="+v, "redline/cmd/redline")
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build: %v: %s", err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, versionA), filepath.Join(binDir, versionB)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// twoHosts is the server namespace running sshd (internal/testutil/sshtest).
type twoHosts struct{ *sshtest.Hosts }

func newTwoHosts(t testing.TB) *twoHosts { return &twoHosts{sshtest.New(t, sshtest.Options{})} }

// ssh returns the client's ssh settings: identity is a key name, hostKey
// the key name known_hosts trusts for the server.
func (h *twoHosts) ssh(t testing.TB, identity, hostKey string) remote.SSH {
	t.Helper()
	ctl, err := os.MkdirTemp(h.Dir, "c")
	if err != nil {
		t.Fatal(err)
	}
	s := remote.SSH{Target: "srv", Config: h.Config(t, identity, hostKey), Wrap: []string{"ip", "netns", "exec", h.Pair.Client}, ControlDir: ctl}
	t.Cleanup(s.Stop)
	return s
}

type testWriter = sshtest.Writer

func (h *twoHosts) readServerFile(t *testing.T, name string) string { return h.ReadServerFile(t, name) }

// dialOptions are a good client's options; remoteBin is the redline the
// server host "has installed".
func (h *twoHosts) dialOptions(t testing.TB, remoteBin string) remote.DialOptions {
	a, _ := binaries(t)
	return remote.DialOptions{
		SSH: h.ssh(t, "user", "host"), Version: versionA, LocalBinary: a, RemoteBinary: remoteBin,
		CacheDir: filepath.Join(h.Dir, "cache"), StateDir: filepath.Join(h.Dir, "state"),
		Stderr: testWriter{T: t},
	}
}

func dial(t testing.TB, o remote.DialOptions) *remote.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := remote.Dial(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSSHHandshake: the session answers hello and inspect over ssh, with
// the installed binary of the right version: nothing is pushed.
func TestSSHHandshake(t *testing.T) {
	h := newTwoHosts(t)
	a, _ := binaries(t)
	o := h.dialOptions(t, a)
	o.Notify = func(msg string) { t.Errorf("unexpected push: %s", msg) }
	c := dial(t, o)
	if c.Hello.Version != versionA || c.Hello.UID != 0 {
		t.Fatalf("hello %+v", c.Hello)
	}
	var snap struct {
		Hostname string `json:"hostname"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Call(ctx, serverhost.OpSnapshot, serverhost.SnapshotArgs{NoProcesses: true}, &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Hostname == "" {
		t.Fatal("snapshot without a hostname")
	}
	var smp serverhost.Sample
	if err := c.Call(ctx, serverhost.OpSample, struct{}{}, &smp); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(smp.Files["/proc/stat"], "cpu ") {
		t.Fatalf("sample of /proc/stat: %.80q", smp.Files["/proc/stat"])
	}
	if err := c.Bye(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "cache")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the cache exists (%v): something was pushed", err)
	}
}

// TestSSHPushOnVersionMismatch: the server host has redline B; the client
// (A) copies itself into the cache, says so, and the session runs A. The
// next dial finds A in the cache. --no-push refuses instead.
func TestSSHPushOnVersionMismatch(t *testing.T) {
	h := newTwoHosts(t)
	_, b := binaries(t)
	o := h.dialOptions(t, b)
	o.NoPush = true
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := remote.Dial(ctx, o); err == nil || !strings.Contains(err.Error(), versionB) {
		t.Fatalf("--no-push with a remote %s: error %v, want one naming the remote version", versionB, err)
	}
	o.NoPush = false
	var said []string
	o.Notify = func(msg string) { said = append(said, msg) }
	c := dial(t, o)
	if c.Hello.Version != versionA || len(said) != 1 || !strings.Contains(said[0], "copying") {
		t.Fatalf("version %q after a push; told %q", c.Hello.Version, said)
	}
	cached, _ := filepath.Glob(filepath.Join(h.Dir, "cache", "redline-*"))
	if len(cached) != 1 {
		t.Fatalf("cache holds %v, want one binary", cached)
	}
	c.Bye(ctx)
	c.Close()
	said = nil
	o.RemoteBinary = "/nonexistent/redline"
	c2 := dial(t, o)
	if c2.Hello.Version != versionA || len(said) != 0 {
		t.Fatalf("second dial: version %q, told %q (want the cached binary, no push)", c2.Hello.Version, said)
	}
}

// TestSSHRefusedBeforeAnythingChanges: a wrong host key or a key the
// server does not accept is a clear error, and the server host is
// untouched (no cache, no journal).
func TestSSHRefusedBeforeAnythingChanges(t *testing.T) {
	h := newTwoHosts(t)
	a, _ := binaries(t)
	for _, tc := range []struct{ name, identity, hostKey, want string }{
		{"wrong host key", "user", "otherhost", "Host key verification failed"},
		{"refused key", "stranger", "host", "Permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := h.dialOptions(t, a)
			o.SSH = h.ssh(t, tc.identity, tc.hostKey)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_, err := remote.Dial(ctx, o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			for _, d := range []string{"cache", "state"} {
				if _, err := os.Stat(filepath.Join(h.Dir, d)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s exists after a refused connection (%v)", d, err)
				}
			}
		})
	}
}

// TestSSHLinkCutRollsBack: a scoped apply and a started redis-server on
// the server host; the link goes down mid-"variant". The session notices
// the missing heartbeats, restores the namespace's sysctl and stops the
// server by itself, and the next session reports what it did.
func TestSSHLinkCutRollsBack(t *testing.T) {
	testCut(t, "heartbeat", func(h *twoHosts, _ *remote.Client) {
		if out, err := exec.Command("ip", "-n", h.Pair.Client, "link", "set", h.Pair.ClientIf, "down").CombinedOutput(); err != nil {
			t.Fatalf("cut the link: %v: %s", err, out)
		}
	})
}

// TestSSHClientKilledRollsBack: the same when the client's ssh is killed
// (SIGKILL, as with the lab): the session's input ends.
func TestSSHClientKilledRollsBack(t *testing.T) {
	testCut(t, "input closed|signal", func(_ *twoHosts, c *remote.Client) { remote.KillTransport(c) })
}

func testCut(t *testing.T, reason string, cut func(*twoHosts, *remote.Client)) {
	testutil.Need(t, "redis-server")
	h := newTwoHosts(t)
	a, _ := binaries(t)
	o := h.dialOptions(t, a)
	o.HeartbeatTimeout = 3 * time.Second
	c := dial(t, o)
	const knob = "/proc/sys/net/core/somaxconn"
	before := h.readServerFile(t, knob)
	want := "1234"
	if before == want {
		want = "1235"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var srv remote.RedisServer
	if err := c.Call(ctx, serverhost.OpRedisStart, serverhost.RedisStartArgs{Bind: h.Pair.ServerIP, Password: "pw"}, &srv); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, serverhost.OpTuneApply, serverhost.TuneApplyArgs{Plan: somaxconnPlan(want), Scoped: true}, nil); err != nil {
		t.Fatal(err)
	}
	if got := h.readServerFile(t, knob); got != want {
		t.Fatalf("somaxconn in the server namespace: %s after apply, want %s", got, want)
	}
	cut(h, c)
	deadline := time.Now().Add(2 * time.Minute)
	for h.readServerFile(t, knob) != before || testutil.ProcessAlive(srv.Pid) {
		if time.Now().After(deadline) {
			t.Fatalf("2m after the cut: somaxconn %s (want %s), redis-server pid %d alive %v",
				h.readServerFile(t, knob), before, srv.Pid, testutil.ProcessAlive(srv.Pid))
		}
		time.Sleep(200 * time.Millisecond)
	}
	st, err := tune.Journaled(ctx, tune.StatusOptions{StateDir: o.StateDir})
	if err != nil || st.Pending() != 0 {
		t.Fatalf("journal after the cleanup: %v pending, %v", st, err)
	}
	c.Close()
	o.SSH.Stop()
	if out, err := exec.Command("ip", "-n", h.Pair.Client, "link", "set", h.Pair.ClientIf, "up").CombinedOutput(); err != nil {
		t.Fatalf("restore the link: %v: %s", err, out)
	}
	c2 := dial(t, o)
	cl := c2.Hello.Cleanups
	if len(cl) != 1 || len(cl[0].Stopped) != 1 || len(cl[0].Restored) != 1 || !regexp.MustCompile(reason).MatchString(cl[0].Reason) {
		t.Fatalf("the next session reports %+v, want one apply restored and one server stopped because of /%s/", cl, reason)
	}
	t.Logf("remote cleanup: %s", cl[0].Reason)
}

// TestSSHBreakdown: the breakdown of a run computed over SSH from two
// samples of the server host's /proc: its CPUs, and the threads of the
// redis-server the session started and, attached as an existing server,
// validated by its pid.
func TestSSHBreakdown(t *testing.T) {
	testutil.Need(t, "redis-server")
	h := newTwoHosts(t)
	a, _ := binaries(t)
	c := dial(t, h.dialOptions(t, a))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if c.Hello.SSHServerIP != h.Pair.ServerIP {
		t.Fatalf("hello: ssh server ip %q (want %s)", c.Hello.SSHServerIP, h.Pair.ServerIP)
	}
	var srv remote.RedisServer
	if err := c.Call(ctx, serverhost.OpRedisStart, serverhost.RedisStartArgs{Bind: h.Pair.ServerIP, Password: "pw"}, &srv); err != nil {
		t.Fatal(err)
	}
	var att serverhost.RedisAttached
	addr := net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port))
	if err := c.Call(ctx, serverhost.OpRedisAttach, serverhost.RedisAttachArgs{Redis: serverhost.RedisTarget{Addr: addr, Password: "pw"}}, &att); err != nil || att.Pid != srv.Pid {
		t.Fatalf("attach %s: pid %d, %v; want %d", addr, att.Pid, err, srv.Pid)
	}
	snap := func() *profile.Snapshot {
		fsys, err := serverhost.NewRemote(c, "srv").Sample(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, err := fs.Stat(fsys, "stat")
		if err != nil {
			t.Fatal(err)
		}
		s, err := profile.ReadSnapshot(profile.BreakdownOptions{FS: fsys, PID: srv.Pid, Now: st.ModTime})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := snap()
	load(t, h, addr)
	b := profile.Compare(before, snap(), srv.Pid)
	if len(b.CPUs) == 0 || b.Server == nil || len(b.Server.Threads) == 0 || b.Interval <= 0 {
		t.Fatalf("breakdown over ssh: %+v", b)
	}
	if b.Server.Threads[0].Comm != "redis-server" || b.Server.Total.Voluntary == nil {
		t.Fatalf("server threads %+v", b.Server.Threads)
	}
}

// load sends the server a few thousand commands from the client side.
func load(t *testing.T, h *twoHosts, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: addr, Password: "pw", NetNS: h.Pair.Client, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 2000; i++ {
		if _, err := c.Do(ctx, "SET", "k", strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
}

func somaxconnPlan(v string) json.RawMessage {
	return json.RawMessage(`{"version":1,"changes":[{"kind":"sysctl","target":"net.core.somaxconn","value":"` + v + `"}]}`)
}
