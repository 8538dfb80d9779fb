package steer

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"redline/internal/testutil"
)

func TestParseIrqbalanceSetup(t *testing.T) {
	cases := []struct {
		reply string
		want  []int
		bad   bool
	}{
		{"SLEEP 10 BANNED 00000000", nil, false},
		{"SLEEP 10 IRQ 30 LOAD 0 DIFF 0 CLASS 5 IRQ 31 LOAD 12 DIFF 3 CLASS 5 BANNED 00000001", []int{30, 31}, false},
		{"", nil, true},
		{"SLEEP 10 IRQ x LOAD 0", nil, true},
		{"stats", nil, true},
	}
	for _, c := range cases {
		got, err := parseIrqbalanceSetup(c.reply)
		if (err != nil) != c.bad || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, %v; want %v (error %v)", c.reply, got, err, c.want, c.bad)
		}
	}
}

// startIrqbalance runs a real irqbalance in the foreground whose policy
// script bans every IRQ, so it never moves one: only its control socket
// is exercised. It is stopped at the end of the test.
func startIrqbalance(t *testing.T) (pid int, socket string) {
	t.Helper()
	bin := testutil.NeedPath(t, "irqbalance")
	if out, _ := exec.Command("pgrep", "-x", "irqbalance").Output(); len(out) > 0 {
		t.Skipf("an irqbalance already runs here (pid %s): not started a second one", out)
	}
	script := filepath.Join(t.TempDir(), "ban-all")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho ban=true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(irqbalanceSocketDir); os.IsNotExist(err) {
		if err := os.Mkdir(irqbalanceSocketDir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(irqbalanceSocketDir) })
	}
	cmd := exec.Command(bin, "--foreground", "--policyscript="+script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	socket = filepath.Join(irqbalanceSocketDir, "irqbalance"+strconv.Itoa(cmd.Process.Pid)+".sock")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if _, err := irqbalanceBanned(socket); err == nil {
			return cmd.Process.Pid, socket
		}
		select {
		case <-ctx.Done():
			t.Fatalf("irqbalance's socket %s never answered", socket)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// With a real irqbalance: steer's ban adds its IRQs to the ones already
// banned, Restore lifts only its own, and after a kill -9 (the ban
// object is dropped without Restore) the next start lifts them from the
// journal.
func TestIrqbalanceBanAndRecover(t *testing.T) {
	testutil.HostWrites(t) // starts a daemon on the real host (one that moves nothing)
	pid, socket := startIrqbalance(t)
	if err := irqbalanceSetBanned(socket, []int{7}); err != nil { // an admin's ban
		t.Fatal(err)
	}
	banned := func() []int {
		t.Helper()
		b, err := irqbalanceBanned(socket)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(b)
		return b
	}
	state := t.TempDir()
	b := &IrqbalanceBan{PID: pid, StateDir: state}
	if err := b.Ban([]int{30, 7}); err != nil {
		t.Fatal(err)
	}
	if err := b.Ban([]int{31, 30}); err != nil {
		t.Fatal(err)
	}
	if got := banned(); !slices.Equal(got, []int{7, 30, 31}) {
		t.Fatalf("banned %v, want 7 (the admin's) 30 31", got)
	}
	msg, err := b.Restore()
	if err != nil {
		t.Fatal(err)
	}
	if got := banned(); !slices.Equal(got, []int{7}) {
		t.Fatalf("after restore banned %v, want the admin's 7 alone (%s)", got, msg)
	}
	if _, err := os.Stat(filepath.Join(state, IrqbalanceJournal)); !os.IsNotExist(err) {
		t.Errorf("journal left after restore: %v", err)
	}
	// Killed: nothing restores, the journal says what to lift.
	killed := &IrqbalanceBan{PID: pid, StateDir: state}
	if err := killed.Ban([]int{40}); err != nil {
		t.Fatal(err)
	}
	msg, err = RecoverIrqbalance(state)
	if err != nil {
		t.Fatal(err)
	}
	if got := banned(); !slices.Equal(got, []int{7}) {
		t.Fatalf("after recovery banned %v, want 7 (%s)", got, msg)
	}
	if msg, err := RecoverIrqbalance(state); msg != "" || err != nil {
		t.Errorf("second recovery: %q, %v", msg, err)
	}
	irqbalanceSetBanned(socket, nil)
	t.Log(msg)
}

// An irqbalance that is gone has no bans to lift: recovery says so and
// clears the journal.
func TestIrqbalanceRecoverGone(t *testing.T) {
	state := t.TempDir()
	b := &IrqbalanceBan{PID: 999999999, StateDir: state, Socket: filepath.Join(state, "gone.sock"), added: []int{30}}
	if err := b.journal(); err != nil {
		t.Fatal(err)
	}
	msg, err := RecoverIrqbalance(state)
	if err != nil || msg != fmt.Sprintf("irqbalance (pid %d) is gone: its bans of IRQs 30 went with it", b.PID) {
		t.Fatalf("%q, %v", msg, err)
	}
	if _, err := os.Stat(filepath.Join(state, IrqbalanceJournal)); !os.IsNotExist(err) {
		t.Errorf("journal left: %v", err)
	}
}
