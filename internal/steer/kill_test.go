package steer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"redline/internal/testutil"
	"redline/internal/tune"
)

// TestMain turns the test binary into a steer child when the environment
// asks for it: one killed at a crash point (TestSteerKilledAtEveryCrashPoint)
// or a daemon of the kill -9 loop (TestSteerKillLoop).
func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "apply":
		applyChild()
	case "daemon":
		daemonChild()
	}
	os.Exit(m.Run())
}

const childEnv = "REDLINE_STEER_CHILD"

// crashAt is one point of steer's second apply where the child dies.
type crashAt struct {
	seq int
	at  tune.CrashPoint
}

func (c crashAt) String() string { return fmt.Sprintf("%s/%d", c.at, c.seq) }

// secondApplyPoints are every crash point of an apply of two moves.
var secondApplyPoints = []crashAt{
	{0, tune.CrashBegin},
	{1, tune.CrashIntent}, {1, tune.CrashWritten}, {1, tune.CrashDone},
	{2, tune.CrashIntent}, {2, tune.CrashWritten}, {2, tune.CrashDone},
	{0, tune.CrashCommit},
}

// applyChild is a steer on irqTree's rehearsal tree: one period's move
// made and recorded, then the next period's two moves, during which it
// kills itself with SIGKILL at REDLINE_STEER_KILL_SEQ/AT. It exits 3 if
// it gets to the end.
func applyChild() {
	sys := tune.RehearsalSystem(os.Getenv("REDLINE_STEER_ROOT"))
	state := os.Getenv("REDLINE_STEER_STATE")
	seq, _ := strconv.Atoi(os.Getenv("REDLINE_STEER_KILL_SEQ"))
	at := tune.CrashPoint(os.Getenv("REDLINE_STEER_KILL_AT"))
	ctx := context.Background()
	first := &TuneActuator{System: sys, StateDir: state}
	if _, _, err := first.Apply(ctx, []Move{move(30, 2)}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	killed := &TuneActuator{System: sys, StateDir: state, AtCrashPoint: func(s int, p tune.CrashPoint) {
		if s == seq && p == at {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}}
	_, _, err := killed.Apply(ctx, []Move{move(30, 3), move(31, 2)})
	fmt.Fprintln(os.Stderr, "the apply finished without being killed:", err)
	os.Exit(3)
}

// TestSteerKilledAtEveryCrashPoint kills a steer with SIGKILL (itself, at
// the point: no race) at every point of an apply of two moves that
// follows one already made, and checks that the next steer's start, or
// tune rollback, puts every IRQ back from the journal alone and leaves
// nothing pending.
func TestSteerKilledAtEveryCrashPoint(t *testing.T) {
	testutil.Heavy(t)
	t.Parallel() // its own trees and state directories; it waits on children
	ctx := context.Background()
	for _, then := range []string{"next steer", "tune rollback"} {
		for _, p := range secondApplyPoints {
			t.Run(then+"/"+p.String(), func(t *testing.T) {
				sys, root := irqTree(t)
				state := t.TempDir()
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), childEnv+"=apply", "REDLINE_STEER_ROOT="+root, "REDLINE_STEER_STATE="+state,
					"REDLINE_STEER_KILL_SEQ="+strconv.Itoa(p.seq), "REDLINE_STEER_KILL_AT="+string(p.at))
				out, err := cmd.CombinedOutput()
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
					t.Fatalf("child: %v, want killed by SIGKILL\n%s", err, out)
				}
				if got := affinitiesIn(t, root); got == "0 1 0" {
					t.Fatalf("nothing moved before the kill at %s: nothing to recover", p)
				}
				switch then {
				case "next steer":
					msg, err := recoverEarlier(ctx, sys, state)
					if err != nil || msg == "" {
						t.Fatalf("recovery: %q, %v", msg, err)
					}
				case "tune rollback": // the journal's own root decides the machine, as in the command
					if _, err := tune.Rollback(ctx, tune.RollbackOptions{StateDir: state}); err != nil {
						t.Fatal(err)
					}
				}
				if got := affinitiesIn(t, root); got != "0 1 0" {
					t.Errorf("after the kill at %s and %s: irqs 30-32 at %s, want 0 1 0", p, then, got)
				}
				if n := pendingIn(t, state); n != 0 {
					t.Errorf("%d changes still pending in the journal", n)
				}
			})
		}
	}
}

func affinitiesIn(t *testing.T, root string) string {
	return affinityIn(t, root, 30) + " " + affinityIn(t, root, 31) + " " + affinityIn(t, root, 32)
}

// pendingIn counts the journal's changes a rollback would still look at.
func pendingIn(t *testing.T, state string) int {
	t.Helper()
	rep, err := tune.Journaled(context.Background(), tune.StatusOptions{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	return rep.Pending()
}
