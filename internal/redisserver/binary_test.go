package redisserver

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"redline/internal/netns"
	"redline/internal/testutil"
)

// swapLayout is the attack of issue 24, item 1: the binary's path goes
// through a directory symlink the attacker owns, pointing at a trusted
// redis-server when checked and swapped to the attacker's program before
// the exec. It returns the path to pass and the swap, and the file the
// attacker's program would create.
func swapLayout(t *testing.T, good string) (bin string, swap func(), marker string) {
	t.Helper()
	base := t.TempDir()
	evil := filepath.Join(base, "evil")
	marker = filepath.Join(base, "pwned")
	if err := os.Mkdir(evil, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ntouch " + marker + "\n"
	if err := os.WriteFile(filepath.Join(evil, "redis-server"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "d")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	swap = func() {
		tmp := filepath.Join(base, "d.new")
		if err := os.Symlink(evil, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, link); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(link, "redis-server"), swap, marker
}

func withHook(t *testing.T, f func()) {
	testHookResolved = f
	t.Cleanup(func() { testHookResolved = nil })
}

// The descriptor checked is the one executed: a swap of the path after
// the check runs the checked program, not the new one (here trusted
// explicitly, as a user's own build is).
func TestStartExecutesTheCheckedFile(t *testing.T) {
	testutil.Heavy(t)
	real := testutil.NeedPath(t, "redis-server")
	good := t.TempDir()
	wrapper := "#!/bin/sh\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(good, "redis-server"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	bin, swap, marker := swapLayout(t, good)
	withHook(t, swap)
	s, err := Start(context.Background(), Options{Binary: bin, AnyOwner: true})
	if _, statErr := os.Stat(marker); statErr == nil {
		t.Fatal("the program swapped in after the check ran")
	}
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
}

// As root, a path through a directory someone else owns is refused before
// anything runs, whatever it points at when checked.
func TestStartAsRootRefusesAnUntrustedPath(t *testing.T) {
	testutil.NeedRoot(t)
	// The directory the trusted redis-server is in: /usr/local/bin (make
	// test-deps' link) on a fresh machine, which has no /usr/bin/redis-server.
	bin, swap, marker := swapLayout(t, filepath.Dir(testutil.NeedPath(t, "redis-server")))
	if err := os.Chown(filepath.Dir(filepath.Dir(bin)), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	withHook(t, swap)
	s, err := Start(context.Background(), Options{Binary: bin})
	if err == nil {
		s.Stop()
		t.Fatal("a binary reached through a directory owned by nobody started as root")
	}
	if _, statErr := os.Stat(marker); statErr == nil {
		t.Fatal("the attacker's program ran as root")
	}
	if !strings.Contains(err.Error(), "owned by uid 65534") && !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("error %q does not name the untrusted directory", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// Issue 24, item 11: a root redline's redis-server ran as root, on an
// address others could reach. It now runs as an unprivileged user.
func TestStartAsRootDropsPrivileges(t *testing.T) {
	testutil.NeedRoot(t)
	s, err := Start(context.Background(), Options{Config: []string{"appendonly yes"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	b, _ := os.ReadFile(filepath.Join("/proc", itoa(s.Pid()), "status"))
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == "Uid:" && (f[1] == "0" || f[2] == "0") {
			t.Fatalf("redis-server runs as root: %s", line)
		}
	}
}

// Without redis-server on PATH, a server starts from redis-tools' binary
// (what make lab installs) and runs as redis-server.
func TestStartFromRedisTools(t *testing.T) {
	testutil.Heavy(t)
	real := testutil.NeedPath(t, debianServer)
	path := t.TempDir()
	if err := os.Symlink(real, filepath.Join(path, debianServer)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", path)
	s, err := Start(context.Background(), Options{AnyOwner: true}) // a link below /tmp: the test's own
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(s.Pid()) + "/comm")
	if err != nil || strings.TrimSpace(string(comm)) != "redis-server" {
		t.Fatalf("comm %q, %v; want redis-server", comm, err)
	}
}

func TestLookServerMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := lookServer(""); err == nil || !strings.Contains(err.Error(), "redis-tools") {
		t.Fatalf("%v; want an error naming redis-tools", err)
	}
}

// fakeWrappers puts programs named like the server's wrappers first on
// PATH, in a directory anyone may write (a user's own, on root's PATH):
// each records that it ran in a world-writable marker directory and
// fails. It returns the marker directory.
func fakeWrappers(t *testing.T, names ...string) string {
	return testutil.FakesOnPath(t, names...)
}

func wrapperRan(t *testing.T, dir string) { testutil.FakeRan(t, dir) }

// Issue 24, item 1 (the wrappers): a root redline started redis-server
// through numactl and taskset found on PATH (setpriv and numactl exec
// the next program by name), so a user-writable directory on root's
// PATH ran a user's program around the server. The wrappers now come
// from root's system directories only, each by its absolute path.
func TestWrappersNotFromPATH(t *testing.T) {
	testutil.NeedRoot(t)
	testutil.Need(t, "redis-server", "taskset", "numactl", "setpriv")
	for _, w := range []string{"taskset", "numactl", "setpriv"} {
		if _, err := lookProgram(w); err != nil {
			t.Skipf("no %s in root's system directories: %v", w, err)
		}
	}
	dir := fakeWrappers(t, "taskset", "numactl")
	node := 0
	o, err := SpecOptions(Spec{CPUs: "0", NUMANode: &node})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Start(context.Background(), o)
	wrapperRan(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	b, _ := os.ReadFile(filepath.Join("/proc", itoa(s.Pid()), "status"))
	if !strings.Contains(string(b), "Cpus_allowed_list:\t0\n") {
		t.Errorf("the server is not pinned to CPU 0 by the real taskset:\n%s", b)
	}
}

// The same through ip netns exec: only its first program was checked,
// and the setpriv found on PATH, on its command line, ran as root.
func TestWrappersNotFromPATHInNetNS(t *testing.T) {
	testutil.NeedRoot(t)
	testutil.Need(t, "redis-server")
	ctx := context.Background()
	pair, err := netns.NewPair(ctx)
	if err != nil {
		t.Skipf("no network namespace: %v", err)
	}
	defer pair.Remove()
	dir := fakeWrappers(t, "setpriv", "taskset")
	o, err := SpecOptions(Spec{CPUs: "0"})
	if err != nil {
		t.Fatal(err)
	}
	o.NetNS, o.Bind = pair.Server, pair.ServerIP
	s, err := Start(ctx, o)
	wrapperRan(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Stop()
}

// lookProgram as root: a name only from the trusted directories, an
// absolute path only under the root rule.
func TestLookProgram(t *testing.T) {
	testutil.NeedRoot(t)
	dir := fakeWrappers(t, "taskset")
	if p, err := lookProgram("taskset"); err == nil && filepath.Dir(p) == dir {
		t.Errorf("lookProgram(taskset) = %s, the PATH's", p)
	}
	if _, err := lookProgram(filepath.Join(dir, "taskset")); err == nil {
		t.Error("a program in a world-writable directory was accepted by its path")
	}
	if _, err := lookProgram("no-such-program-redline"); err == nil || !strings.Contains(err.Error(), "not found in /usr/local/sbin") {
		t.Errorf("a missing program: %v", err)
	}
	if _, err := lookProgram("bin/taskset"); err == nil {
		t.Error("a relative path was accepted")
	}
}
