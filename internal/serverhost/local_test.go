package serverhost

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"redline/internal/steerspec"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// TestSteerWritesThroughTheHostsSystem: a steer started on a Local (a
// session's) writes through the Local's System: a session rehearsing on
// a tree never has steer write the live host.
func TestSteerWritesThroughTheHostsSystem(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"proc/sys/net/core/somaxconn": "4096\n"})
	l := NewLocal(LocalOptions{System: func() *tune.System { return tune.RehearsalSystem(root) }})
	o := l.steerOptions(steerspec.Spec{}, 42)
	if o.System == nil {
		t.Fatal("steer's options carry no System: it would write the live host")
	}
	sys := o.System()
	defer sys.Close()
	if sys.Live || sys.Root != root {
		t.Fatalf("steer's system: live %v, root %q; want the rehearsal tree %s", sys.Live, sys.Root, root)
	}
}

// TestInNetNSIsTheSameHost: a Local seen from a lab's namespaces keeps the
// one ledger and hold (a second Local on the state directory refuses
// until Close), its steer counts the packets of the server's and the
// load's namespaces, and its IRQ moves journal no namespace (IRQs are
// the host's).
func TestInNetNSIsTheSameHost(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"proc/sys/net/core/somaxconn": "4096\n"})
	state := t.TempDir()
	l := NewLocal(LocalOptions{StateDir: state, Holder: "a test lab", System: func() *tune.System { return tune.RehearsalSystem(root) }})
	if err := l.Hold(); err != nil {
		t.Fatal(err)
	}
	v := l.InNetNS("srv-ns", "cli-ns")
	if err := v.Hold(); err != nil {
		t.Fatalf("the view does not share the hold: %v", err)
	}
	if err := NewLocal(LocalOptions{StateDir: state}).Hold(); err == nil || !strings.Contains(err.Error(), "in use by a test lab") {
		t.Fatalf("a second Local took the held state directory: %v", err)
	}
	o := v.steerOptions(steerspec.Spec{}, 42)
	if !slices.Equal(o.NetNS, []string{"srv-ns", "cli-ns"}) {
		t.Errorf("steer counts the namespaces %q, want the server's and the load's", o.NetNS)
	}
	sys := o.System()
	sys.Close()
	if sys.NetNS != "" {
		t.Errorf("steer's moves are journaled in namespace %q", sys.NetNS)
	}
	if _, err := v.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	h := NewLocal(LocalOptions{StateDir: state})
	if err := h.Hold(); err != nil {
		t.Fatalf("after Close: %v", err)
	}
	h.Close(context.Background())
}

// TestMissingStateDir: a state directory that does not exist has nothing
// to roll back, and reading it makes none; Open refuses it when the user
// named it (StateDirMustExist: a mistyped directory), and only on this
// machine.
func TestMissingStateDir(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "never")
	h, err := Open(ctx, OpenOptions{Local: LocalOptions{StateDir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.TuneRollback(ctx, TuneRollbackArgs{})
	if err != nil || res == nil || res.Outcomes == nil || len(res.Outcomes) != 0 {
		t.Errorf("rollback of a missing state directory: %+v, %v; want an empty result", res, err)
	}
	if rep, err := h.TuneStatus(ctx, ""); err != nil || len(rep.Sessions) != 0 {
		t.Errorf("status of a missing state directory: %+v, %v", rep, err)
	}
	h.Close(ctx)
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("reading the journal made %s", dir)
	}
	if _, err := Open(ctx, OpenOptions{Local: LocalOptions{StateDir: dir, StateDirMustExist: true}}); !errors.Is(err, ErrNoStateDir) {
		t.Errorf("Open of a named missing state directory: %v, want ErrNoStateDir", err)
	}
}
