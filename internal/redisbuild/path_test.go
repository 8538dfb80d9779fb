package redisbuild

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/testutil"
	"redline/internal/trusted"
)

// Issue 24, item 1 held out (the build): a root build (a root lab's
// server.build, an untrusted scenario's "compiler on PATH", the
// session's build) ran the compiler, make, tar, apt-get and dpkg-source
// by name from root's PATH, and make's recipes looked up cc, ar, as and
// ld on that PATH again, so a user's fakes first on it ran as root. The
// programs now come from root's system directories, and the build's own
// PATH is those directories.
func TestBuildToolsNotFromPATH(t *testing.T) {
	testutil.NeedRoot(t)
	dir := testutil.FakesOnPath(t, "make", "gcc", "cc", "llvm-profdata", "llvm-bolt", "llvm-bolt-99")
	ctx := context.Background()
	r := &runner{}
	r.run(ctx, t.TempDir(), "make", "--version")
	FindToolchain(ctx, "gcc")
	Toolchain{Family: "clang"}.Tool("llvm-profdata")
	if b, err := FindBolt(ctx); err == nil && strings.HasPrefix(b.Path, dir) {
		t.Errorf("llvm-bolt from the PATH's user-writable directory: %s", b.Path)
	}
	testutil.FakeRan(t, dir)
	for _, kv := range buildEnv() {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok && v != strings.Join(trusted.Dirs, ":") {
			t.Errorf("a root build's PATH is %s, not root's system directories", v)
		}
	}
	if _, err := FindToolchain(ctx, dir+"/gcc"); err == nil {
		t.Error("a compiler in a world-writable directory was accepted by its path")
	}
	testutil.FakeRan(t, dir)
}

// Held out as well: make includes every makefile $MAKEFILES names, and
// gcc finds cc1, as and ld through $GCC_EXEC_PREFIX and $COMPILER_PATH
// and writes where $DEPENDENCIES_OUTPUT says, so a root build with a
// user's environment (sudo -E, a root shell that kept it) ran the user's
// makefile as root. The build's environment drops them.
func TestBuildEnvDropsToolVariables(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	evil := filepath.Join(dir, "evil.mk")
	os.WriteFile(evil, []byte("$(shell touch "+marker+")\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte("all:\n\t@true\n"), 0o644)
	t.Setenv("MAKEFILES", evil)
	for _, v := range []string{"GCC_EXEC_PREFIX", "COMPILER_PATH", "DEPENDENCIES_OUTPUT", "LD_LIBRARY_PATH", "LD_AUDIT", "CPATH", "LIBRARY_PATH"} {
		t.Setenv(v, dir)
	}
	r := &runner{}
	if err := r.run(context.Background(), dir, "make"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("make read the makefile $MAKEFILES named")
	}
	for _, kv := range buildEnv() {
		if strings.HasSuffix(kv, "="+dir) {
			t.Errorf("the build's environment keeps %s", kv)
		}
	}
}

// Issue 35, item 5: the build's environment was a deny-list, and
// CONFIG_SITE, BASH_ENV, TMPDIR and CCACHE_* still reached make as root.
// It is an allow-list now: none of them, nor any other variable, is kept.
func TestBuildEnvIsAnAllowList(t *testing.T) {
	for _, v := range []string{"CONFIG_SITE", "BASH_ENV", "ENV", "TMPDIR", "CCACHE_DIR", "CCACHE_PREFIX", "SHELLOPTS", "REDLINE_SOMETHING_NEW"} {
		t.Setenv(v, "/tmp/theirs")
	}
	for _, kv := range buildEnv() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "HOME", "USER", "LOGNAME", "LC_ALL":
		default:
			t.Errorf("the build's environment keeps %s", kv)
		}
	}
}
