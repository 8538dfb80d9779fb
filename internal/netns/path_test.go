package netns

import (
	"context"
	"testing"

	"redline/internal/testutil"
)

// Issue 24, item 1 held out: the namespace pair ran ip by name from
// root's PATH (a lab's netns target, autotune --netns, the tests), so a
// user's fake ip first on it ran as root. It now comes from root's
// system directories.
func TestIPNotFromPATH(t *testing.T) {
	testutil.NeedRoot(t)
	dir := testutil.FakesOnPath(t, "ip")
	p, err := NewPair(context.Background())
	testutil.FakeRan(t, dir)
	if err != nil {
		t.Skipf("no network namespace: %v", err)
	}
	p.Remove()
}
