package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"redline/internal/labdata"
	"redline/internal/testutil"
	"redline/internal/testutil/respscript"
)

// startStoppableLab starts "redline lab" as a child process (the test
// binary re-executed as redline) on a scenario whose tuned variant
// journals a CONFIG SET on the managed server (no host write), and returns
// once that change is journaled, with the child's stderr lines so far.
// closeOutput closes the read end of the child's stdout and stderr pipe.
func startStoppableLab(t *testing.T) (cmd *exec.Cmd, out, state string, closeOutput func()) {
	t.Helper()
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.yaml")
	os.WriteFile(plan, []byte("version: 1\nredis: {addr: \"127.0.0.1:6379\"}\nchanges:\n  - {kind: redis-config, target: hz, value: \"17\"}\n"), 0o644)
	scenario := filepath.Join(dir, "s.yaml")
	os.WriteFile(scenario, []byte(`
name: stopped
workloads: [{name: set, bench: "-t set -c 2 --duration 1s"}]
variants:
  - {name: baseline, baseline: true}
  - {name: tuned, tune: {plan: `+plan+`}}
repetitions: 20
doctor: false
`), 0o644)
	out, state = filepath.Join(dir, "out"), filepath.Join(dir, "state")
	cmd = exec.Command(os.Args[0], "lab", scenario, "--out", out, "--state-dir", state, "--progress", "plain")
	cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := testutil.StartSignallable(cmd); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // the test has what it needs; drain
			}
		}
		close(lines)
	}()
	journal := filepath.Join(state, "journal.jsonl")
	for line := range lines {
		// The journal exists from the variant's apply to its rollback.
		if strings.Contains(line, "applying the changes of variant tuned") && waitForFile(journal, 5*time.Second) {
			return cmd, out, state, func() { r.Close() }
		}
	}
	t.Fatal("the lab ended before its tuned variant was journaled")
	return
}

// waitForFile polls for path until it exists or d passes.
func waitForFile(path string, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(2 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return true
		}
	}
	return false
}

// checkStoppedCleanly checks that the child exited with want, that the
// journal holds nothing left to restore and that the partial results and
// a report were written.
func checkStoppedCleanly(t *testing.T, cmd *exec.Cmd, out, state string, want int) {
	t.Helper()
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != want {
		t.Errorf("exit %d (%v), want %d", code, err, want)
	}
	stdout, stderr, code := runCLI(t, context.Background(), nil, "tune", "status", "--state-dir", state, "--json")
	var st struct{ Sessions []json.RawMessage }
	if code != 0 || json.Unmarshal([]byte(stdout), &st) != nil || len(st.Sessions) != 0 {
		t.Errorf("the journal still holds changes after the lab stopped (exit %d):\n%s%s", code, stdout, stderr)
	}
	res, err := labdata.ReadResult(filepath.Join(out, "result.json"))
	// The runs are in a random order within a round: the tuned variant
	// may have been the first, with nothing measured before the signal.
	if err != nil || res.Complete || res.Error == "" {
		t.Errorf("partial results: %v, %+v", err, res)
	}
	if _, err := os.Stat(filepath.Join(out, "report.md")); err != nil {
		t.Errorf("no partial report: %v", err)
	}
}

// TestLabStopsCleanlyOnHangupAndQuit: SIGHUP (terminal or SSH session
// closed) and SIGQUIT killed the lab with its changes applied and no
// report. Now they stop it the way Ctrl-C does.
func TestLabStopsCleanlyOnHangupAndQuit(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, out, state, _ := startStoppableLab(t)
			cmd.Process.Signal(sig)
			checkStoppedCleanly(t, cmd, out, state, 128+int(sig))
		})
	}
}

// TestLabStopsCleanlyWhenOutputCloses: a closed pipe on stdout or stderr
// (redline lab | tee log, and tee dies) killed the lab by SIGPIPE. Now the
// lab stops the way Ctrl-C does, and exits 141 (128+SIGPIPE).
func TestLabStopsCleanlyWhenOutputCloses(t *testing.T) {
	cmd, out, state, closeOutput := startStoppableLab(t)
	closeOutput()
	checkStoppedCleanly(t, cmd, out, state, 128+int(syscall.SIGPIPE))
}

// stoppingLine is what a child run prints when it takes the first stop
// signal (REDLINE_TEST_ANNOUNCE_STOP).
const stoppingLine = "redline-test: stopping"

// TestSecondSignalEnds (issue 24, item 8): a doctor waiting on a server
// that never answers ignored SIGTERM for as long as the server stalled.
// The first signal asks for a clean stop; a second one ends the process.
func TestSecondSignalEnds(t *testing.T) {
	srv := respscript.Start(t, respscript.Options{Script: respscript.OnNth("INFO", 1, respscript.Stall())})
	host, port, _ := strings.Cut(srv.Addr(), ":")
	cmd := exec.Command(os.Args[0], "doctor", "--host", host, "-p", port)
	cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1", "REDLINE_TEST_ANNOUNCE_STOP=1")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case <-srv.Seen("INFO", 1):
	case <-exited:
		t.Fatalf("doctor ended before asking INFO: %v", cmd.ProcessState)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	for line := range lines {
		if line == stoppingLine {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	<-exited
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("after a second SIGTERM: %v, want killed by it", cmd.ProcessState)
	}
}
