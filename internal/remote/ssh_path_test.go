package remote

import (
	"context"
	"testing"

	"redline/internal/testutil"
)

// Issue 24, item 1 held out: a root lab, autotune or command with --ssh
// ran ssh by name from root's PATH, so a user's fake ssh first on it
// ran as root (with the agent and keys of root). It now comes from
// root's system directories.
func TestSSHNotFromPATH(t *testing.T) {
	testutil.NeedRoot(t)
	dir := testutil.FakesOnPath(t, "ssh")
	s := &SSH{Target: "nobody@127.0.0.1", ControlDir: t.TempDir(), Options: []string{"ConnectTimeout=1"}}
	s.command(context.Background(), "true").Run()
	s.Stop()
	testutil.FakeRan(t, dir)
}
