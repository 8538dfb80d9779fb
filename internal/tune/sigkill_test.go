package tune

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"redline/internal/testutil"
	"strings"
	"syscall"
	"testing"
	"time"

	"redline/internal/tune/simfs"
)

// TestMain turns the test binary into the apply child of
// TestSIGKILLDuringApply when the environment asks for it.
func TestMain(m *testing.M) {
	if plan := os.Getenv("REDLINE_TUNE_CHILD_PLAN"); plan != "" {
		applyChild(plan)
	}
	os.Exit(m.Run())
}

// applyChild applies a plan slowly until the parent kills the process; it
// exits 3 if it ever gets to the end.
func applyChild(planPath string) {
	p, err := ReadPlanFile(planPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	s := RehearsalSystem(os.Getenv("REDLINE_TUNE_CHILD_ROOT"))
	s.FS.(*simfs.FS).Delay = 20 * time.Millisecond
	_, err = Apply(bg, s, p, ApplyOptions{StateDir: os.Getenv("REDLINE_TUNE_CHILD_STATE")})
	fmt.Fprintln(os.Stderr, "the apply finished before the parent killed it:", err)
	os.Exit(3)
}

// TestSIGKILLDuringApply runs apply in a child process and SIGKILLs it
// after a varying number of journaled steps, at a random moment within the
// step; the rollback that follows, from the journal alone, must leave the
// tree byte-identical.
func TestSIGKILLDuringApply(t *testing.T) {
	testutil.Heavy(t)
	p := smallPlan()
	planPath := filepath.Join(t.TempDir(), "plan.json")
	var buf bytes.Buffer
	p.EncodeJSON(&buf)
	os.WriteFile(planPath, buf.Bytes(), 0o644)
	for _, k := range []int{1, 2, len(p.Changes) / 2, len(p.Changes) - 1} {
		root := testutil.WriteTree(t, smallHost)
		orig := snapshot(t, root)
		state := t.TempDir()
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "REDLINE_TUNE_CHILD_PLAN="+planPath, "REDLINE_TUNE_CHILD_ROOT="+root, "REDLINE_TUNE_CHILD_STATE="+state)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if err := waitIntents(filepath.Join(state, journalName), k, 20*time.Second); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("k=%d: %v\n%s", k, err, out.String())
		}
		time.Sleep(time.Duration(rand.IntN(25)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("k=%d: the child was not killed by SIGKILL (%v):\n%s", k, err, out.String())
		}
		st, err := Journaled(bg, StatusOptions{StateDir: state})
		if err != nil || len(st.Sessions) != 1 || st.Sessions[0].End != "" {
			t.Fatalf("k=%d: status after SIGKILL: %+v %v", k, st, err)
		}
		rb, err := Rollback(bg, RollbackOptions{StateDir: state})
		if err != nil || !rb.Archived {
			t.Fatalf("k=%d: rollback after SIGKILL: %+v %v", k, rb, err)
		}
		requireSame(t, orig, snapshot(t, root), fmt.Sprintf("SIGKILL after %d intents", k))
	}
}

// waitIntents polls the journal until it holds n intent records.
func waitIntents(path string, n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(path)
		if strings.Count(string(b), `"op":"intent"`) >= n {
			return nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	return fmt.Errorf("the journal did not reach %d intents within %s", n, limit)
}
