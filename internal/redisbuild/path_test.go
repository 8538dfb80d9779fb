package redisbuild

import (
	"context"
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
	dir := testutil.FakesOnPath(t, "make", "gcc", "cc", "llvm-profdata")
	ctx := context.Background()
	r := &runner{}
	r.run(ctx, t.TempDir(), "make", "--version")
	FindToolchain(ctx, "gcc")
	Toolchain{Family: "clang"}.Tool("llvm-profdata")
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
