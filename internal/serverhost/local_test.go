package serverhost

import (
	"testing"

	"redline/internal/labdata"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// TestSteerWritesThroughTheHostsSystem: a steer started on a Local (a
// session's) writes through the Local's System: a session rehearsing on
// a tree never has steer write the live host.
func TestSteerWritesThroughTheHostsSystem(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"proc/sys/net/core/somaxconn": "4096\n"})
	l := NewLocal(LocalOptions{System: func() *tune.System { return tune.RehearsalSystem(root) }})
	o := l.steerOptions(labdata.SteerSpec{}, 42)
	if o.System == nil {
		t.Fatal("steer's options carry no System: it would write the live host")
	}
	sys := o.System()
	defer sys.Close()
	if sys.Live || sys.Root != root {
		t.Fatalf("steer's system: live %v, root %q; want the rehearsal tree %s", sys.Live, sys.Root, root)
	}
}
