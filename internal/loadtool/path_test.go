package loadtool

import (
	"context"
	"testing"
	"time"

	"redline/internal/testutil"
)

// Issue 24, item 1 held out: a root lab ran redis-benchmark by name from
// root's PATH, so a user's fake first on it ran as root. It now comes
// from root's system directories.
func TestToolNotFromPATH(t *testing.T) {
	testutil.NeedRoot(t)
	dir := testutil.FakesOnPath(t, "redis-benchmark")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	Run(ctx, Request{Tool: "redis-benchmark", Args: []string{"-n", "1"}, Test: "PING_INLINE", Addr: "127.0.0.1:1"})
	testutil.FakeRan(t, dir)
}
