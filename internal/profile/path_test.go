package profile

import (
	"context"
	"os"
	"testing"
	"time"

	"redline/internal/testutil"
)

// Issue 24, item 1 held out: profile ran perf (recording, syscall
// counts) and dpkg-query (the debug package's name) by name from root's
// PATH, so a user's fakes first on it ran as root. They now come from
// root's system directories; a --perf path must pass the same rule.
func TestPerfNotFromPATH(t *testing.T) {
	testutil.NeedRoot(t)
	dir := testutil.FakesOnPath(t, "perf", "dpkg-query")
	ctx := context.Background()
	debPackage(ctx, "/usr/bin/redis-server")
	CountSyscalls(ctx, SyscallOptions{PID: os.Getpid(), Duration: 10 * time.Millisecond})
	testutil.FakeRan(t, dir)
	if _, err := CountSyscalls(ctx, SyscallOptions{PID: os.Getpid(), Duration: time.Millisecond, Perf: dir + "/perf"}); err == nil {
		t.Error("a perf in a world-writable directory was accepted by its path")
	}
	testutil.FakeRan(t, dir)
}
