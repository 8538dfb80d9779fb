package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"redline/internal/netns"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// manyHost is issue 41's production host: a redis-server in this network
// namespace, one in another (srv), and one with a password in a third
// (cli). Other servers of the machine may exist too: the tests look only
// at these three.
type manyHost struct {
	pair          *netns.Pair
	root, a, b    *redisserver.Server
	passFile      string
	rootP, aP, bP string // their ports
}

func newManyHost(t *testing.T) *manyHost {
	testutil.NeedRoot(t)
	pair, err := netns.NewPair(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pair.Remove() })
	h := &manyHost{pair: pair}
	h.root = redistest.Start(t)
	h.a = redistest.StartWith(t, redisserver.Options{NetNS: pair.Server, Bind: "127.0.0.1"})
	h.b = redistest.StartWith(t, redisserver.Options{NetNS: pair.Client, Bind: "127.0.0.1", Config: []string{"requirepass sekret"}})
	h.passFile = filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(h.passFile, []byte("sekret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.rootP, h.aP, h.bP = strconv.Itoa(h.root.Port), strconv.Itoa(h.a.Port), strconv.Itoa(h.b.Port)
	return h
}

func TestManyServersHost(t *testing.T) {
	h := newManyHost(t)
	ctx := context.Background()
	cli := func(args ...string) (string, string, int) {
		t.Helper()
		return runCLI(t, ctx, nil, args...)
	}

	// doctor runs in the srv namespace, where nothing listens on 6379
	// whatever else runs on the machine: the root namespace's server and
	// the cli one's are "another namespace" there.
	t.Run("doctor marks the other namespaces' servers", func(t *testing.T) {
		// --verbose lists every server: the brief report names four of
		// other namespaces and counts the rest, and a busy machine has many.
		out, errOut, _ := cli("doctor", "--netns", h.pair.Server, "--rule", "maxmemory,somaxconn", "--verbose")
		if !strings.Contains(errOut, "no server at the default address 127.0.0.1:6379 (") || strings.Contains(errOut, "connection refused") {
			t.Errorf("want the servers found, not connection refused:\n%s", errOut)
		}
		for _, want := range []string{
			":" + h.rootP + " in netns /proc/" + strconv.Itoa(h.root.Pid()) + "/ns/net",
			":" + h.bP + " in netns " + h.pair.Client,
			"--netns NETNS -p PORT",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in:\n%s", want, out)
			}
		}
	})
	t.Run("doctor reaches a server through --netns and names the password flags", func(t *testing.T) {
		out, errOut, code := cli("doctor", "--netns", h.pair.Client, "-p", h.bP, "--rule", "maxmemory")
		if code != ExitError || !strings.Contains(errOut+out, "--pass-file") || !strings.Contains(errOut+out, "REDISCLI_AUTH") {
			t.Errorf("no password: exit %d, want 2 with the password hint:\n%s\n%s", code, out, errOut)
		}
		out, errOut, code = cli("doctor", "--netns", h.pair.Client, "-p", h.bP, "--pass-file", h.passFile, "--rule", "maxmemory", "--json")
		if !strings.Contains(out, `"redis": "127.0.0.1:`+h.bP+`"`) || strings.Contains(out, "NOAUTH") {
			t.Errorf("with the password: exit %d:\n%s\n%s", code, out, errOut)
		}
	})
	t.Run("inspect -p shows the server on that port", func(t *testing.T) {
		out, errOut, code := cli("inspect", "-p", h.rootP)
		if code != 0 || !strings.Contains(out, "Redis pid "+strconv.Itoa(h.root.Pid())) || strings.Contains(out, "Redis pid "+strconv.Itoa(h.a.Pid())) {
			t.Errorf("inspect -p %s: exit %d\n%s\n%s", h.rootP, code, out, errOut)
		}
		out, _, _ = cli("inspect", "--netns", h.pair.Server, "-p", h.aP)
		if !strings.Contains(out, "Redis pid "+strconv.Itoa(h.a.Pid())) {
			t.Errorf("inspect --netns %s -p %s does not show pid %d:\n%s", h.pair.Server, h.aP, h.a.Pid(), out)
		}
		out, _, _ = cli("inspect", "--pid", strconv.Itoa(h.b.Pid()))
		if !strings.Contains(out, "reach it with --netns "+h.pair.Client) {
			t.Errorf("inspect does not say how to reach pid %d:\n%s", h.b.Pid(), out)
		}
	})
	t.Run("tune plan picks the server of --redis or -p", func(t *testing.T) {
		for _, prof := range tune.ProfileNames() {
			out, errOut, _ := cli("tune", "plan", "--profile", prof, "-p", h.rootP)
			if strings.Contains(out+errOut, "several Redis processes") {
				t.Errorf("profile %s with -p %s:\n%s\n%s", prof, h.rootP, out, errOut)
			}
		}
		_, errOut, code := cli("tune", "plan", "--profile", "redis-config", "--redis", "127.0.0.1:1")
		if code == 0 || !strings.Contains(errOut, "no redis-server in this network namespace listens on 127.0.0.1:1") {
			t.Errorf("an address where nothing listens: exit %d\n%s", code, errOut)
		}
		_, errOut, code = cli("tune", "plan", "--profile", "redis-config", "-p", h.rootP, "--pid", strconv.Itoa(h.a.Pid()))
		if code == 0 || !strings.Contains(errOut, "is not the server at 127.0.0.1:"+h.rootP) {
			t.Errorf("a --pid of another server: exit %d\n%s", code, errOut)
		}
		out, errOut, code := cli("tune", "plan", "--profile", "redis-config", "--netns", h.pair.Client, "-p", h.bP)
		if code == 0 || !strings.Contains(out+errOut, "--pass-file") {
			t.Errorf("the password server without its password: exit %d\n%s\n%s", code, out, errOut)
		}
	})
	t.Run("tune status and verify tell cannot read from changed", func(t *testing.T) {
		state := t.TempDir()
		plan := filepath.Join(t.TempDir(), "plan.yaml")
		if err := os.WriteFile(plan, []byte("version: 1\nchanges:\n  - kind: redis-config\n    target: latency-monitor-threshold\n    value: \"100\"\nredis:\n  addr: 127.0.0.1:"+h.bP+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		base := []string{"--netns", h.pair.Client, "-p", h.bP}
		out, errOut, code := cli(append([]string{"tune", "apply", plan, "--yes", "--state-dir", state, "--pass-file", h.passFile}, base...)...)
		if code != 0 {
			t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
		}
		out, _, _ = cli("tune", "status", "--state-dir", state)
		if strings.Contains(out, "no longer what redline set") || !strings.Contains(out, "could not be read now") || !strings.Contains(out, "REDISCLI_AUTH") {
			t.Errorf("status without the password:\n%s", out)
		}
		out, _, code = cli("tune", "verify", "--state-dir", state)
		if code != ExitFailure || !strings.Contains(out, "could not be read now") {
			t.Errorf("verify without the password: exit %d\n%s", code, out)
		}
		out, _, code = cli("tune", "verify", "--state-dir", state, "--pass-file", h.passFile)
		if code != 0 || !strings.Contains(out, "all 1 changes in place") {
			t.Errorf("verify with the password: exit %d\n%s", code, out)
		}
		out, errOut, code = cli("tune", "rollback", "--state-dir", state, "--pass-file", h.passFile)
		if code != 0 {
			t.Errorf("rollback: exit %d\n%s\n%s", code, out, errOut)
		}
	})
}
