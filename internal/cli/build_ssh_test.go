package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"redline/internal/labdata"
	"redline/internal/redisbuild"
	"redline/internal/remote"
	"redline/internal/serverhost"
	"redline/internal/testutil"
	"redline/internal/testutil/sshtest"
)

// tinyRedisTree writes a source tree that redisbuild takes for Redis's
// (src/server.c) and whose Makefile builds a small program from it with
// the make variables redline gives, in a second: the ssh tests exercise
// the session's build, not Redis's compile time (the real builds are the
// heavy tests of internal/redisbuild). It is root's, below /run, since a
// root session builds only what root alone could have written; its
// content is new each time, so its first build is not in the cache.
func tinyRedisTree(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/run", "redline-tiny-redis-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	files := map[string]string{
		"src/server.c": fmt.Sprintf("/* %s */\nint main(void) { return 0; }\n", dir),
		"src/Makefile": "redis-server: server.c\n\t$(CC) $(OPTIMIZATION) $(REDIS_CFLAGS) -o redis-server server.c $(REDIS_LDFLAGS)\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuildSSH: redline build --ssh builds on the server host, through
// the session pushed there, in that host's cache: the first build of a
// spec compiles (with the gcc the session found in /usr/bin), the second
// is the cached binary. A hostile spec, which this redline would refuse
// before sending but another client could send, is refused by the session
// itself: a flag with a shell in it, a compiler named by a path outside
// the root-owned compiler directories, a source tree somebody else could
// have written.
func TestBuildSSH(t *testing.T) {
	testutil.NeedTools(t, "gcc", "make")
	h := sshtest.New(t, sshtest.Options{SetEnv: []string{"HOME=" + t.TempDir(), "REDLINE_TEST_MAIN=1"}})
	cfg := h.Config(t, "user", "host")
	tree := tinyRedisTree(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := func(args ...string) (labdata.BuildProvenance, string) {
		t.Helper()
		argv := append([]string{"netns", "exec", h.Pair.Client, os.Args[0], "build", "--ssh", "srv", "--ssh-config", cfg, "--json"}, args...)
		cmd := exec.CommandContext(ctx, "ip", argv...)
		cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("build --ssh: %v\n%s%s", err, stdout.String(), stderr.String())
		}
		var prov labdata.BuildProvenance
		if err := json.Unmarshal(stdout.Bytes(), &prov); err != nil {
			t.Fatalf("build --ssh --json: %v\n%s", err, stdout.String())
		}
		return prov, stderr.String()
	}
	first, stderr := run("--source", tree, "-O", "-O1", "--cflag=-fno-plt")
	t.Cleanup(func() { // the tiny tree's entry and its lock: nothing else will ask for them
		os.RemoveAll(filepath.Dir(first.Binary))
		os.Remove(filepath.Dir(first.Binary) + ".lock")
	})
	if first.Cached || first.SourceKind != "tree" || first.Compiler != "/usr/bin/gcc" || !strings.HasPrefix(first.Binary, "/var/cache/redline/build/") {
		t.Errorf("first build: %+v", first)
	}
	if !strings.Contains(stderr, "building on ") {
		t.Errorf("build --ssh does not say where it builds:\n%s", stderr)
	}
	again, _ := run("--source", tree, "-O", "-O1", "--cflag=-fno-plt")
	if !again.Cached || again.Key != first.Key || again.Binary != first.Binary {
		t.Errorf("second build is not the cached one: %+v", again)
	}

	// The session's own refusals, through the server-host API.
	c, err := remote.Dial(ctx, remote.DialOptions{SSH: remote.SSH{Target: "srv", Config: cfg, Wrap: []string{"ip", "netns", "exec", h.Pair.Client}},
		Version: Version(), StateDir: filepath.Join(h.Dir, "state"), Stderr: sshtest.Writer{T: t}})
	if err != nil {
		t.Fatal(err)
	}
	sh := serverhost.NewRemote(c, "srv")
	defer sh.Close(context.Background())
	userTree := tinyRedisTree(t)
	if err := os.Chown(filepath.Join(userTree, "src", "Makefile"), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		spec labdata.BuildSpec
		want string
	}{
		{"shell in a flag", labdata.BuildSpec{Source: tree, CFlags: []string{"-O2;touch /tmp/owned"}}, "not a compiler flag"},
		{"compiler by path", labdata.BuildSpec{Source: tree, CC: filepath.Join(h.Dir, "gcc")}, "by name"},
		{"tree somebody else wrote", labdata.BuildSpec{Source: userTree}, "owned by uid 65534, not root"},
	} {
		_, err := sh.Build(ctx, serverhost.BuildArgs{Spec: c.spec})
		if !errors.As(err, new(redisbuild.SpecError)) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "refused by the session") {
			t.Errorf("%s: %v, want the session's refusal with %q", c.name, err, c.want)
		}
	}
}

// TestLabSSHBuild: a lab with a target of kind ssh and a variant
// server: {build: {source: debian}} builds that server on the server host
// (through a session there, in its cache: the CI's gcc build of Debian's
// source, which internal/redisbuild's heavy test makes or the cache
// holds), then starts the built binary there for the variant, measures it
// from here and records its provenance.
// fetchDebianSource puts Debian's redis source into the build cache from this
// host's namespace: the test's server host is a network namespace with no
// route to the package registries, and shares this host's /var/cache (on a
// fresh machine nothing fetched it before; a build there waits for a fetch in
// flight here, one fetch at a time).
func fetchDebianSource(t *testing.T, ctx context.Context) {
	t.Helper()
	if err := redisbuild.FetchDebian(ctx, ""); err != nil {
		t.Fatalf("fetching Debian's redis source on the host: %v", err)
	}
}

func TestLabSSHBuild(t *testing.T) {
	testutil.NeedTools(t, "gcc", "make", "dpkg-source", "apt-get", "/usr/lib/x86_64-linux-gnu/libjemalloc.so")
	l := newSSHLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // a cold cache compiles Redis
	defer cancel()
	fetchDebianSource(t, ctx)
	cmd := l.scenario(t, ctx, `
name: built-there
target: {kind: ssh, host: srv, heartbeat: 10s}
workloads: [{name: set, bench: "-t set -c 2 -n 2000"}]
variants:
  - {name: baseline, baseline: true}
  - {name: built, server: {build: {source: debian}}}
repetitions: 1
`, "user", "host")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("lab: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "building on srv") {
		t.Errorf("the lab does not say it builds on the server host:\n%s", stderr.String())
	}
	res := l.result(t)
	b := res.Variants[1].Build
	if !res.Complete || len(res.Runs) != 2 || b == nil || b.SourceKind != "debian" || !strings.HasPrefix(b.Binary, "/var/cache/redline/build/") {
		t.Fatalf("result: complete %v, %d runs, the built variant's build %+v", res.Complete, len(res.Runs), b)
	}
	if l.serverRedis(t) {
		t.Errorf("a redis-server still runs on the server host")
	}
}
