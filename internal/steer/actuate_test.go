package steer

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"redline/internal/change"
	"redline/internal/host"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// irqTree is a rehearsal host with queue IRQs 30 and 31 on CPUs 0 and 1.
func irqTree(t *testing.T) (*tune.System, string) {
	t.Helper()
	root := testutil.WriteTree(t, map[string]string{
		"proc/irq/30/smp_affinity_list": "0\n",
		"proc/irq/31/smp_affinity_list": "1\n",
		"proc/irq/32/smp_affinity_list": "0\n",
	})
	return tune.RehearsalSystem(root), root
}

func affinityIn(t *testing.T, root string, irq int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "proc", "irq", strconv.Itoa(irq), "smp_affinity_list"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func move(irq, to int) Move {
	return Move{IRQ: irq, Queue: QueueKey{Dev: "eth0", Queue: irq - 30}, To: to, Reason: "test"}
}

// Moves in two periods, then a restore: every IRQ is back where it was.
func TestTuneActuatorRestores(t *testing.T) {
	sys, root := irqTree(t)
	a := &TuneActuator{System: sys, StateDir: t.TempDir()}
	ctx := context.Background()
	done, notDone, err := a.Apply(ctx, []Move{move(30, 2), move(31, 3)})
	if err != nil || len(done) != 2 || len(notDone) != 0 {
		t.Fatalf("apply: done %v, not done %v, err %v", done, notDone, err)
	}
	if _, _, err := a.Apply(ctx, []Move{move(30, 3)}); err != nil {
		t.Fatal(err)
	}
	if got := affinityIn(t, root, 30) + " " + affinityIn(t, root, 31); got != "3 3" {
		t.Fatalf("after the moves: %s, want 3 3", got)
	}
	msg, err := a.Restore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := affinityIn(t, root, 30) + " " + affinityIn(t, root, 31); got != "0 1" {
		t.Fatalf("after restore: %s, want 0 1 (%s)", got, msg)
	}
}

// Someone else changes a moved IRQ: restore leaves it alone and says so.
func TestTuneActuatorLeavesDriftAlone(t *testing.T) {
	sys, root := irqTree(t)
	a := &TuneActuator{System: sys, StateDir: t.TempDir()}
	ctx := context.Background()
	if _, _, err := a.Apply(ctx, []Move{move(30, 2), move(31, 3)}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "proc", "irq", "30", "smp_affinity_list")
	if err := os.WriteFile(p, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	msg, err := a.Restore(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := affinityIn(t, root, 30) + " " + affinityIn(t, root, 31); got != "1 1" {
		t.Fatalf("after restore: %s, want 1 (drift left alone) and 1 (restored)", got)
	}
	if !strings.Contains(msg, "1 left alone") {
		t.Errorf("restore says %q", msg)
	}
}

// A steer killed with -9 never restored: the next start rolls back what
// it left, and only that.
func TestRecoverLeftovers(t *testing.T) {
	sys, root := irqTree(t)
	state := t.TempDir()
	ctx := context.Background()
	killed := &TuneActuator{System: sys, StateDir: state}
	if _, _, err := killed.Apply(ctx, []Move{move(30, 2)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := killed.Apply(ctx, []Move{move(30, 3), move(31, 2)}); err != nil {
		t.Fatal(err)
	}
	// Another tool's apply in the same journal stays.
	other := tune.FromChanges([]change.Change{AffinityChange(32, 1, "not steer")}, "redline tune")
	if _, err := tune.Apply(ctx, sys, other, tune.ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	n, _, err := RecoverLeftovers(ctx, sys, state)
	if err != nil || n != 2 {
		t.Fatalf("recovered %d sessions, err %v; want 2", n, err)
	}
	if got := affinityIn(t, root, 30) + " " + affinityIn(t, root, 31); got != "0 1" {
		t.Fatalf("after recovery: %s, want 0 1", got)
	}
	if got := affinityIn(t, root, 32); got != "1" {
		t.Fatalf("irq 32 (not steer's) reads %s after recovery, want 1", got)
	}
	if n, _, err := RecoverLeftovers(ctx, sys, state); err != nil || n != 0 {
		t.Fatalf("second recovery: %d, %v; want nothing left", n, err)
	}
}

// On this machine's real virtio queue IRQs (REDLINE_TEST_HOST_WRITES=1):
// move each to another CPU through tune, read back, restore.
func TestHostVirtioSteerMoves(t *testing.T) {
	testutil.HostWrites(t)
	fs, err := host.NewFS("/")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := host.Read(fs, host.Options{NoProcesses: true})
	if err != nil {
		t.Fatal(err)
	}
	topo := nodeTopology(t, snap)
	if len(topo.CPUs) < 2 {
		t.Skip("needs 2 CPUs")
	}
	irqs := QueueIRQsOf(snap)
	if len(irqs) == 0 {
		t.Skip("no NIC queue IRQs on this machine")
	}
	var moves []Move
	for _, q := range irqs {
		path := "/proc/irq/" + strconv.Itoa(q.IRQ) + "/smp_affinity_list"
		orig, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { // the safety net under steer's own restore
			if now, _ := os.ReadFile(path); string(now) != string(orig) {
				t.Errorf("%s left at %q; putting back %q", path, now, orig)
				os.WriteFile(path, orig, 0)
			}
		})
		to := topo.CPUs[0].ID
		if q.Affinity.Len() == 1 && q.Affinity.Contains(to) {
			to = topo.CPUs[1].ID
		}
		moves = append(moves, Move{IRQ: q.IRQ, Queue: q.Queue, From: q.Affinity, To: to, Reason: "host test"})
	}
	sys := tune.LiveSystem()
	defer sys.Close()
	a := &TuneActuator{System: sys, StateDir: t.TempDir()}
	ctx := context.Background()
	done, notDone, err := a.Apply(ctx, moves)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("moved %d IRQs, refused %v", len(done), notDone)
	for _, m := range done {
		b, _ := os.ReadFile("/proc/irq/" + strconv.Itoa(m.IRQ) + "/smp_affinity_list")
		if strings.TrimSpace(string(b)) != strconv.Itoa(m.To) {
			t.Errorf("irq %d reads %q after the move to %d", m.IRQ, b, m.To)
		}
	}
	if _, err := a.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	for _, m := range moves {
		b, _ := os.ReadFile("/proc/irq/" + strconv.Itoa(m.IRQ) + "/smp_affinity_list")
		if strings.TrimSpace(string(b)) != m.From.List() {
			t.Errorf("irq %d reads %q after restore, want %s", m.IRQ, b, m.From.List())
		}
	}
}
