package redisadmin_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"redline/internal/testutil"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"redline/internal/netns"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/redistest"
)

func dial(t *testing.T, s *redisserver.Server) *redisadmin.Conn {
	t.Helper()
	c, err := redisadmin.Dial(context.Background(), redisadmin.Options{Addr: s.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A server started with a low open-files limit lowers maxclients itself;
// Collect must show both what redis.conf asked and what the server runs
// with, the server's start-up warnings, and that it is local.
func TestCollectLive(t *testing.T) {
	s := redistest.StartWith(t, redisserver.Options{
		Config: []string{"maxclients 10000", "tcp-backlog 511", "latency-monitor-threshold 0"},
		Wrap:   [][]string{{"prlimit", "--nofile=256:256", "--"}},
	})
	c := dial(t, s)
	f, err := redisadmin.Collect(context.Background(), c, redisadmin.CollectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Version == "" || !strings.HasPrefix(f.Version, "7.") && !strings.HasPrefix(f.Version, "8.") {
		t.Errorf("Version = %q", f.Version)
	}
	if n, _ := f.Config.Int("maxclients"); n != 256-32 {
		t.Errorf("running maxclients = %d, want 224 (256 fds - 32)", n)
	}
	if f.ConfFile == nil || f.ConfFile.Directives["maxclients"] != "10000" {
		t.Errorf("ConfFile = %+v (err %q), want maxclients 10000", f.ConfFile, f.Errors["conf-file"])
	}
	if !slices.ContainsFunc(f.LogWarnings, func(w string) bool { return strings.Contains(w, "maxclients has been reduced to 224") }) {
		t.Errorf("LogWarnings = %q (err %q), want the maxclients reduction", f.LogWarnings, f.Errors["log"])
	}
	if !f.Process.Local || f.Process.Pid != s.Pid() {
		t.Errorf("Process = %+v, want local pid %d", f.Process, s.Pid())
	}
	if same, known := f.Process.SameNetNS(); !known || !same {
		t.Errorf("SameNetNS = %v, %v; want same and known", same, known)
	}
	if len(f.Errors) != 0 {
		t.Errorf("Errors = %v", f.Errors)
	}
	if f.RoundTrips != 3 {
		t.Errorf("RoundTrips = %d, want 3 (INFO, CONFIG GET, LATENCY LATEST)", f.RoundTrips)
	}
	if _, ok := f.Info.Section("Commandstats"); !ok {
		t.Error("INFO everything has no Commandstats section")
	}
}

func TestLatencyLatestLive(t *testing.T) {
	s := redistest.Start(t, "latency-monitor-threshold 1", "enable-debug-command yes")
	c := dial(t, s)
	ctx := context.Background()
	if _, err := c.Do(ctx, "DEBUG", "SLEEP", "0.02"); err != nil {
		t.Fatal(err)
	}
	ev, err := c.LatencyLatest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ev, func(e redisadmin.LatencyEvent) bool { return e.Event == "command" })
	if i < 0 || ev[i].Max < 15*time.Millisecond {
		t.Errorf("LATENCY LATEST = %+v, want a command event of about 20ms", ev)
	}
}

func TestDialErrors(t *testing.T) {
	ctx := context.Background()
	port, err := redisserver.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	_, err = redisadmin.Dial(ctx, redisadmin.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:"+strconv.Itoa(port)) {
		t.Errorf("dial to a closed port: %v, want an error naming the address", err)
	}
	s := redistest.Start(t, "requirepass sekret")
	if _, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: s.Addr(), Password: "wrong"}); err == nil || !strings.Contains(err.Error(), "password") {
		t.Errorf("wrong password: %v", err)
	}
	c, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: s.Addr(), Password: "sekret"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Info(ctx, "server"); err != nil {
		t.Errorf("INFO after AUTH: %v", err)
	}
	if _, err := redisadmin.Dial(ctx, redisadmin.Options{}); err == nil {
		t.Error("empty address accepted")
	}
}

// A stalled server (a listener that never answers) must not hang a round trip.
func TestRoundTripDeadline(t *testing.T) {
	s := redistest.Start(t, "enable-debug-command yes")
	c, err := redisadmin.Dial(context.Background(), redisadmin.Options{Addr: s.Addr(), Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.Do(context.Background(), "DEBUG", "SLEEP", "1")
	if err == nil || !strings.Contains(err.Error(), "no reply") || time.Since(start) > 900*time.Millisecond {
		t.Errorf("err = %v after %s; want a deadline error well before the 1s sleep ends", err, time.Since(start))
	}
}

func TestLocateNotLocal(t *testing.T) {
	s := redistest.Start(t)
	c := dial(t, s)
	info, err := c.Info(context.Background(), "server")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if p := redisadmin.Locate(info, "/proc", 0, now); !p.Local {
		t.Errorf("real server not local: %+v", p)
	}
	// pid 1 exists but is not the server.
	if p := redisadmin.Locate(info, "/proc", 1, now); p.Local {
		t.Errorf("pid 1 taken for the server: %+v", p)
	}
	// A fake /proc whose process has the right name but the wrong start.
	root := t.TempDir()
	pid, _ := info.ProcessID()
	dir := filepath.Join(root, strconv.Itoa(pid))
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(root, "stat"), []byte("cpu 1 2 3\nbtime 1000\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "stat"), []byte(strconv.Itoa(pid)+" (redis-server) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 100 20\n"), 0o644)
	p := redisadmin.Locate(info, root, 0, now)
	if p.Local || !strings.Contains(p.Reason, "different process") {
		t.Errorf("stale pid: %+v", p)
	}
}

// AUTH with a password, an ACL user, and HELLO 3 all authenticate; a
// refusal is ErrAuth and its message never holds the password.
func TestHandshakeNeverShowsPassword(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t, "requirepass sekret-default", "user alice on >sekret-alice ~* &* +@all")
	good := []redisadmin.Options{
		{Password: "sekret-default"},
		{Username: "alice", Password: "sekret-alice"},
		{Username: "alice", Password: "sekret-alice", RESP3: true},
		{Password: "sekret-default", RESP3: true},
	}
	for _, o := range good {
		o.Addr = s.Addr()
		c, err := redisadmin.Dial(ctx, o)
		if err != nil {
			t.Errorf("user %q resp3 %v: %v", o.Username, o.RESP3, err)
			continue
		}
		if cfg, err := c.ConfigGet(ctx, "maxclients"); err != nil || cfg["maxclients"] == "" {
			t.Errorf("user %q resp3 %v: CONFIG GET = %v, %v", o.Username, o.RESP3, cfg, err)
		}
		c.Close()
	}
	bad := []redisadmin.Options{
		{Password: "wrong-pw-1"},
		{Username: "alice", Password: "wrong-pw-2"},
		{Username: "alice", Password: "wrong-pw-3", RESP3: true},
		{RESP3: true},
	}
	for _, o := range bad {
		o.Addr = s.Addr()
		_, err := redisadmin.Dial(ctx, o)
		if !errors.Is(err, redisadmin.ErrAuth) {
			t.Errorf("user %q password %q resp3 %v: %v, want ErrAuth", o.Username, o.Password, o.RESP3, err)
			continue
		}
		if strings.Contains(err.Error(), "wrong-pw") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// With NetNS the connection starts inside that namespace: the server of a
// veth pair is reachable from the client namespace, not from ours.
func TestDialFromNamespace(t *testing.T) {
	testutil.NeedRoot(t)
	p, err := netns.NewPair(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Remove() })
	s := redistest.StartWith(t, redisserver.Options{NetNS: p.Server, Bind: p.ServerIP})
	c, err := redisadmin.Dial(context.Background(), redisadmin.Options{Addr: s.Addr(), NetNS: p.Client})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Info(context.Background(), "server"); err != nil {
		t.Error(err)
	}
	// The server sees the connection come from the client namespace's end.
	if v, err := c.Do(context.Background(), "CLIENT", "INFO"); err != nil || !strings.Contains(v.Str, " addr="+p.ClientIP+":") {
		t.Errorf("CLIENT INFO %q (%v), want addr=%s:…", v.Str, err, p.ClientIP)
	}
	if _, err := redisadmin.Dial(context.Background(), redisadmin.Options{Addr: s.Addr(), Timeout: 300 * time.Millisecond}); err == nil {
		t.Error("the server in its namespace was reachable from ours")
	}
}
