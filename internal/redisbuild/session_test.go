package redisbuild

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/buildspec"
	"redline/internal/testutil"
)

// TestCheckSession: what a root session builds for a client. A flag with
// a shell in it, a compiler named by path (or not found in the root-owned
// directories), a relative source, or a source somebody other than root
// could have written are refused; debian with gcc by name resolves the
// compiler to its root-owned path.
func TestCheckSession(t *testing.T) {
	testutil.NeedRoot(t)
	testutil.NeedTools(t, "gcc")
	got, err := CheckSession(buildspec.Spec{Source: DebianSource})
	if err != nil || !filepath.IsAbs(got.CC) || filepath.Base(got.CC) != "gcc" {
		t.Fatalf("debian with gcc: %+v, %v", got, err)
	}
	// A root-owned place every directory of which root alone can write
	// (not below /tmp, which everyone can).
	dir, err := os.MkdirTemp("/run", "redline-build-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	tree := filepath.Join(dir, "redis")
	os.MkdirAll(filepath.Join(tree, "src"), 0o755)
	os.WriteFile(filepath.Join(tree, "src", "server.c"), []byte("int main;\n"), 0o644)
	os.WriteFile(filepath.Join(tree, "Makefile"), []byte("all:\n"), 0o644)
	if _, err := CheckSession(buildspec.Spec{Source: tree}); err != nil {
		t.Errorf("a tree root owns: %v", err)
	}
	userTree := filepath.Join(dir, "user-redis")
	os.MkdirAll(filepath.Join(userTree, "src"), 0o755)
	os.WriteFile(filepath.Join(userTree, "src", "server.c"), []byte("int main;\n"), 0o644)
	evil := filepath.Join(userTree, "Makefile")
	os.WriteFile(evil, []byte("all:\n\tid\n"), 0o644)
	if err := os.Chown(evil, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	tarball := filepath.Join(dir, "redis-7.2.4.tar.gz")
	os.WriteFile(tarball, []byte("x"), 0o644)
	os.Chmod(tarball, 0o666)
	for _, c := range []struct {
		name string
		spec buildspec.Spec
		want string
	}{
		{"shell in a flag", buildspec.Spec{Source: DebianSource, CFlags: []string{"-O2;id"}}, "not a compiler flag"},
		{"compiler by path", buildspec.Spec{Source: DebianSource, CC: "/tmp/gcc"}, "by name"},
		{"compiler elsewhere", buildspec.Spec{Source: DebianSource, CC: "no-such-cc"}, "not found in /usr/local/bin or /usr/bin"},
		{"relative source", buildspec.Spec{Source: "redis"}, "absolute path"},
		{"a file somebody else owns in the tree", buildspec.Spec{Source: userTree}, "owned by uid 65534, not root"},
		{"a tarball others can write", buildspec.Spec{Source: tarball}, "writable by group or others"},
	} {
		_, err := CheckSession(c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
}
