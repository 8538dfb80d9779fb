package tune

import (
	"context"
	"testing"

	"redline/internal/testutil"
)

// Issue 24, item 1 held out: the service kind ran systemctl by name from
// root's PATH; a user's fake systemctl first on it ran as root on a mere
// tune preview (State). It now comes from root's system directories.
func TestSystemctlNotFromPATH(t *testing.T) {
	testutil.NeedRoot(t)
	dir := testutil.FakesOnPath(t, "systemctl")
	Systemd{}.State(context.Background(), "irqbalance")
	testutil.FakeRan(t, dir)
}
