package tune

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"redline/internal/testutil"
)

// TestMain turns the test binary into the apply child of
// TestSIGKILLDuringApply when the environment asks for it.
func TestMain(m *testing.M) {
	if plan := os.Getenv("REDLINE_TUNE_CHILD_PLAN"); plan != "" {
		applyChild(plan)
	}
	os.Exit(m.Run())
}

// killPoints are where TestSIGKILLDuringApply kills the child within a
// step: the intent on disk, the new content on disk beside the file but
// not yet in it (the middle of a write), written, and recorded.
var killPoints = []string{"intent", "mid-write", "written", "done"}

// applyChild applies a plan until it reaches step REDLINE_TUNE_CHILD_STEP
// at point REDLINE_TUNE_CHILD_AT, says "ready" on stdout there and waits
// for the parent's SIGKILL; it exits 3 if it ever gets to the end.
func applyChild(planPath string) {
	p, err := ReadPlanFile(planPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	step, _ := strconv.Atoi(os.Getenv("REDLINE_TUNE_CHILD_STEP"))
	at := os.Getenv("REDLINE_TUNE_CHILD_AT")
	wait := func() {
		fmt.Println("ready")
		time.Sleep(time.Hour) // until SIGKILL
	}
	s := RehearsalSystem(os.Getenv("REDLINE_TUNE_CHILD_ROOT"))
	armed := false
	simOf(s).MidWrite = func(string) {
		if armed {
			wait()
		}
	}
	hook := func(k int, ph phase) bool {
		if k != step {
			return false
		}
		switch {
		case ph == afterIntent && at == "mid-write":
			armed = true
		case ph == afterIntent && at == "intent", ph == afterWrite && at == "written", ph == afterDone && at == "done":
			wait()
		}
		return false
	}
	_, err = Apply(bg, s, p, ApplyOptions{StateDir: os.Getenv("REDLINE_TUNE_CHILD_STATE"), hook: hook})
	fmt.Fprintln(os.Stderr, "the apply finished before the parent killed it:", err)
	os.Exit(3)
}

// TestSIGKILLDuringApply runs apply in a child process and SIGKILLs it in
// the middle of the write of every step, and at the other kill points of
// the first, a coupled, an IRQ-mask and the last step (the child says when
// it is there; TestKillAfterEveryStep covers every step in-process); the
// rollback that follows, from the journal alone, must leave the tree
// byte-identical. "mid-write" is issue 10 item 4: a rehearsal write killed
// half way must not leave an empty file.
func TestSIGKILLDuringApply(t *testing.T) {
	testutil.Heavy(t)
	p := smallPlan()
	planPath := filepath.Join(t.TempDir(), "plan.json")
	var buf bytes.Buffer
	p.EncodeJSON(&buf)
	os.WriteFile(planPath, buf.Bytes(), 0o644)
	every := map[int]bool{1: true, 3: true, 7: true, len(p.Changes): true}
	for k := 1; k <= len(p.Changes); k++ {
		for _, at := range killPoints {
			if every[k] || at == "mid-write" {
				killAt(t, planPath, k, at)
			}
		}
	}
}

func killAt(t *testing.T, planPath string, k int, at string) {
	t.Helper()
	what := fmt.Sprintf("SIGKILL at step %d, %s", k, at)
	root := testutil.WriteTree(t, smallHost)
	orig := snapshot(t, root)
	state := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "REDLINE_TUNE_CHILD_PLAN="+planPath, "REDLINE_TUNE_CHILD_ROOT="+root,
		"REDLINE_TUNE_CHILD_STATE="+state, "REDLINE_TUNE_CHILD_STEP="+strconv.Itoa(k), "REDLINE_TUNE_CHILD_AT="+at)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	cmd.Process.Signal(syscall.SIGKILL)
	err = cmd.Wait()
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("%s: the child never got there (%v):\n%s", what, err, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("%s: the child was not killed by SIGKILL (%v):\n%s", what, err, stderr.String())
	}
	st, err := Journaled(bg, StatusOptions{StateDir: state})
	if err != nil || len(st.Sessions) != 1 || st.Sessions[0].End != "" {
		t.Fatalf("%s: status: %+v %v", what, st, err)
	}
	rb, err := Rollback(bg, RollbackOptions{StateDir: state})
	if err != nil || !rb.Archived || rb.Count(StatusDrift) != 0 {
		t.Fatalf("%s: rollback: %+v %v", what, rb, err)
	}
	requireSame(t, orig, snapshot(t, root), what)
}
