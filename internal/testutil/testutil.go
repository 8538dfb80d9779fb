// Package testutil holds what several packages' tests share: golden files
// (with the one -update flag), fixture trees copied or written into a
// temporary directory, and the one skip policy for tests that need root,
// real servers or writes to the host.
//
// The policy:
//   - Heavy: the test starts real processes, namespaces or long runs;
//     skipped under -short (make test-short).
//   - NeedRoot: the test needs root (namespaces, setns, other users'
//     /proc files); skipped without it (a failure under CI=true, which
//     runs as root, so a lost privilege cannot hide tests), and under -short.
//   - HostWrites: the test writes the real host (sysctls, IRQ affinities),
//     always restoring it; it runs only with REDLINE_TEST_HOST_WRITES=1
//     (CI sets it) and then must run as root: a silent skip in CI would
//     hide that it never ran. It holds the host lock exclusively.
//   - HostState: the test reads host state that a HostWrites test may
//     change for a while (a doctor verdict on somaxconn, "the host is
//     unchanged"); it holds the host lock shared. go test runs packages
//     in parallel, so the lock is a file lock across test binaries.
package testutil

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

var update = flag.Bool("update", false, "rewrite golden files (and generated fixtures) instead of comparing with them")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Golden compares got with the file at path; under -update it writes got
// there instead (creating directories).
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s differs (-golden +got; go test -update rewrites it):\n%s", path, d)
	}
}

// CopyTree copies the tree at src (a fixture tree: regular files,
// directories and symlinks, which stay symlinks) into a new temporary
// directory and returns it.
func CopyTree(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy fixture tree %s: %v", src, err)
	}
	return dst
}

// WriteTree writes files (path relative to the root -> content) below a
// new temporary directory and returns it.
func WriteTree(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// Heavy skips t under -short.
func Heavy(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real processes or namespaces: skipped under -short")
	}
}

// NeedRoot skips t unless it runs as root (and under -short).
func NeedRoot(t testing.TB) {
	t.Helper()
	Heavy(t)
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("needs root, and CI runs as root")
	}
	t.Skip("needs root")
}

// HostWritesEnv is the variable that lets tests write the real host.
const HostWritesEnv = "REDLINE_TEST_HOST_WRITES"

// HostWrites skips t unless REDLINE_TEST_HOST_WRITES=1, and fails it when
// that is set without root. The test itself must restore what it writes
// (t.Cleanup), also when it fails.
func HostWrites(t testing.TB) {
	t.Helper()
	if os.Getenv(HostWritesEnv) != "1" {
		t.Skip("writes the host: set " + HostWritesEnv + "=1 to run (CI does)")
	}
	if os.Geteuid() != 0 {
		t.Fatal(HostWritesEnv + "=1 needs root")
	}
	lockHost(t, unix.LOCK_EX)
}

// HostState holds the host lock shared for the rest of t, so no
// HostWrites test changes the host while t reads it.
func HostState(t testing.TB) {
	t.Helper()
	lockHost(t, unix.LOCK_SH)
}

// hostLockPath is shared by every test binary of the tree on this machine.
var hostLockPath = filepath.Join(os.TempDir(), "redline-test-host.lock")

func lockHost(t testing.TB, how int) {
	t.Helper()
	f, err := os.OpenFile(hostLockPath, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatalf("host test lock: %v", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		t.Fatalf("host test lock: %v", err)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
}

// NeedTools skips t under -short, and unless every program is present
// (Need: each declared in needs.go; in CI, where make test-deps installs
// them, a missing one fails t instead).
func NeedTools(t testing.TB, programs ...string) {
	t.Helper()
	Heavy(t)
	Need(t, programs...)
}

// TrustedTempDir is a temporary directory a root redline may run
// programs from (internal/trusted's rule: owned by root and writable by
// nobody else, from / down): a directory below /run when root, removed
// at the test's end; t.TempDir otherwise, where the rule does not apply.
// For test stand-ins of the programs redline runs (perf, a compiler).
func TrustedTempDir(t testing.TB) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("/run", "redline-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
