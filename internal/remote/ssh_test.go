package remote_test

import (
	"context"
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
	"syscall"
	"testing"
	"time"

	"redline/internal/netns"
	"redline/internal/profile"
	"redline/internal/redisadmin"
	"redline/internal/remote"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// The tests below play two hosts: a network namespace runs a real sshd
// (the "server host"), and the client side runs ssh from the other end
// of a veth link. The remote redline is built by the test.

const (
	versionA = "rl-test-A" // the client's version, and its binary's
	versionB = "rl-test-B" // another version, installed "remotely"
	sshPort  = 2222        // the namespace is new: nothing else listens in it
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds redline twice, as versions A and B.
func binaries(t *testing.T) (a, b string) {
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

// twoHosts is a server namespace running sshd and the client's ssh setup.
type twoHosts struct {
	pair    *netns.Pair
	dir     string
	keys    map[string]string // name -> private key path
	cfgPath func(identity, knownHostsKey string) string
}

func keygen(t *testing.T, path string) {
	t.Helper()
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "redline-test", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
}

func newTwoHosts(t *testing.T) *twoHosts {
	t.Helper()
	testutil.NeedRoot(t)
	for _, bin := range []string{"/usr/sbin/sshd", "ssh", "ssh-keygen"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s not installed (apt-get install openssh-server openssh-client)", bin)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pair, err := netns.NewPair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pair.Remove() })
	dir, err := os.MkdirTemp("", "rl-ssh-") // short: ControlPath sockets live below it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	h := &twoHosts{pair: pair, dir: dir, keys: map[string]string{}}
	for _, k := range []string{"host", "otherhost", "user", "stranger"} {
		h.keys[k] = filepath.Join(dir, k+"_key")
		keygen(t, h.keys[k])
	}
	copyFile(t, h.keys["user"]+".pub", filepath.Join(dir, "authorized_keys"))
	h.startSSHD(t)
	return h
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func (h *twoHosts) startSSHD(t *testing.T) {
	t.Helper()
	cfg := filepath.Join(h.dir, "sshd_config")
	conf := fmt.Sprintf(`Port %d
ListenAddress %s
HostKey %s
PidFile %s
AuthorizedKeysFile %s
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
LogLevel ERROR
`, sshPort, h.pair.ServerIP, h.keys["host"], filepath.Join(h.dir, "sshd.pid"), filepath.Join(h.dir, "authorized_keys"))
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // sshd's privilege separation directory
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", h.pair.Server, "/usr/sbin/sshd", "-D", "-e", "-f", cfg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = testWriter{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	dial := netns.Dialer(h.pair.Client)
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := dial(ctx, "tcp", net.JoinHostPort(h.pair.ServerIP, strconv.Itoa(sshPort)))
		cancel()
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd in %s does not listen: %v", h.pair.Server, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// ssh returns the client's ssh settings: identity is a key name, hostKey
// the key name known_hosts trusts for the server.
func (h *twoHosts) ssh(t *testing.T, identity, hostKey string) remote.SSH {
	t.Helper()
	pub, err := os.ReadFile(h.keys[hostKey] + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	known := filepath.Join(h.dir, "known_hosts-"+hostKey)
	line := fmt.Sprintf("[%s]:%d %s", h.pair.ServerIP, sshPort, pub)
	if err := os.WriteFile(known, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(h.dir, "ssh_config-"+identity+"-"+hostKey)
	conf := fmt.Sprintf(`Host srv
  HostName %s
  Port %d
  User root
  IdentityFile %s
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile %s
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  ConnectTimeout 20
`, h.pair.ServerIP, sshPort, h.keys[identity], known)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	ctl, err := os.MkdirTemp(h.dir, "c")
	if err != nil {
		t.Fatal(err)
	}
	s := remote.SSH{Target: "srv", Config: cfg, Wrap: []string{"ip", "netns", "exec", h.pair.Client}, ControlDir: ctl}
	t.Cleanup(s.Stop)
	return s
}

// dialOptions are a good client's options; remoteBin is the redline the
// server host "has installed".
func (h *twoHosts) dialOptions(t *testing.T, remoteBin string) remote.DialOptions {
	a, _ := binaries(t)
	return remote.DialOptions{
		SSH: h.ssh(t, "user", "host"), Version: versionA, LocalBinary: a, RemoteBinary: remoteBin,
		CacheDir: filepath.Join(h.dir, "cache"), StateDir: filepath.Join(h.dir, "state"),
		Stderr: testWriter{t},
	}
}

func dial(t *testing.T, o remote.DialOptions) *remote.Client {
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

func (h *twoHosts) readServerFile(t *testing.T, name string) string {
	t.Helper()
	var b []byte
	err := netns.Do(h.pair.Server, func() (err error) {
		b, err = os.ReadFile(name)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestSSHHandshake: the session answers hello and inspect over ssh, with
// the installed binary of the right version: nothing is pushed.
func TestSSHHandshake(t *testing.T) {
	h := newTwoHosts(t)
	a, _ := binaries(t)
	o := h.dialOptions(t, a)
	o.Notify = func(msg string) { t.Errorf("unexpected push: %s", msg) }
	c := dial(t, o)
	if c.Hello.Version != versionA || c.Hello.Protocol != remote.ProtocolVersion || c.Hello.UID != 0 {
		t.Fatalf("hello %+v", c.Hello)
	}
	var snap struct {
		Hostname string `json:"hostname"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Call(ctx, remote.OpSnapshot, remote.SnapshotArgs{NoProcesses: true}, &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Hostname == "" {
		t.Fatal("snapshot without a hostname")
	}
	var smp remote.Sample
	if err := c.Call(ctx, remote.OpSample, struct{}{}, &smp); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(smp.Files["/proc/stat"], "cpu ") {
		t.Fatalf("sample of /proc/stat: %.80q", smp.Files["/proc/stat"])
	}
	if err := c.Bye(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "cache")); !errors.Is(err, os.ErrNotExist) {
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
	cached, _ := filepath.Glob(filepath.Join(h.dir, "cache", "redline-*"))
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
				if _, err := os.Stat(filepath.Join(h.dir, d)); !errors.Is(err, os.ErrNotExist) {
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
		if out, err := exec.Command("ip", "-n", h.pair.Client, "link", "set", h.pair.ClientIf, "down").CombinedOutput(); err != nil {
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
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
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
	if err := c.Call(ctx, remote.OpRedisStart, remote.RedisStartArgs{Bind: h.pair.ServerIP, Config: []string{"protected-mode no"}}, &srv); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, remote.OpTuneApply, remote.TuneApplyArgs{Plan: somaxconnPlan(want), Scoped: true}, nil); err != nil {
		t.Fatal(err)
	}
	if got := h.readServerFile(t, knob); got != want {
		t.Fatalf("somaxconn in the server namespace: %s after apply, want %s", got, want)
	}
	cut(h, c)
	deadline := time.Now().Add(2 * time.Minute)
	for h.readServerFile(t, knob) != before || processAlive(srv.Pid) {
		if time.Now().After(deadline) {
			t.Fatalf("2m after the cut: somaxconn %s (want %s), redis-server pid %d alive %v",
				h.readServerFile(t, knob), before, srv.Pid, processAlive(srv.Pid))
		}
		time.Sleep(200 * time.Millisecond)
	}
	st, err := tune.Journaled(ctx, tune.StatusOptions{StateDir: o.StateDir})
	if err != nil || st.Pending() != 0 {
		t.Fatalf("journal after the cleanup: %v pending, %v", st, err)
	}
	c.Close()
	o.SSH.Stop()
	if out, err := exec.Command("ip", "-n", h.pair.Client, "link", "set", h.pair.ClientIf, "up").CombinedOutput(); err != nil {
		t.Fatalf("restore the link: %v: %s", err, out)
	}
	c2 := dial(t, o)
	cl := c2.Hello.Cleanups
	if len(cl) != 1 || len(cl[0].Stopped) != 1 || len(cl[0].Restored) != 1 || !regexp.MustCompile(reason).MatchString(cl[0].Reason) {
		t.Fatalf("the next session reports %+v, want one apply restored and one server stopped because of /%s/", cl, reason)
	}
	t.Logf("remote cleanup: %s", cl[0].Reason)
}

// processAlive reports whether pid runs (a zombie counts as gone).
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// TestSSHBreakdown: the breakdown of a run computed over SSH from two
// samples of the server host's /proc: its CPUs, and the threads of the
// redis-server the session started and, attached as an existing server,
// validated by its pid.
func TestSSHBreakdown(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	h := newTwoHosts(t)
	a, _ := binaries(t)
	c := dial(t, h.dialOptions(t, a))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if c.Hello.Protocol != remote.ProtocolVersion || c.Hello.SSHServerIP != h.pair.ServerIP {
		t.Fatalf("hello: protocol %d, ssh server ip %q (want %d, %s)", c.Hello.Protocol, c.Hello.SSHServerIP, remote.ProtocolVersion, h.pair.ServerIP)
	}
	var srv remote.RedisServer
	if err := c.Call(ctx, remote.OpRedisStart, remote.RedisStartArgs{Bind: h.pair.ServerIP, Config: []string{"protected-mode no"}}, &srv); err != nil {
		t.Fatal(err)
	}
	var att remote.RedisAttached
	addr := net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port))
	if err := c.Call(ctx, remote.OpRedisAttach, remote.RedisAttachArgs{Redis: remote.RedisTarget{Addr: addr}}, &att); err != nil || att.Pid != srv.Pid {
		t.Fatalf("attach %s: pid %d, %v; want %d", addr, att.Pid, err, srv.Pid)
	}
	snap := func() *profile.Snapshot {
		fsys, err := c.Proc(ctx)
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
	c, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: addr, NetNS: h.pair.Client, Timeout: 5 * time.Second})
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
