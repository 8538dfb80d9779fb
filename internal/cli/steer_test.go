package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"redline/internal/steer"
	"redline/internal/testutil"
)

func TestSteerRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"steer", "--sample", "3"},
		{"steer", "--majority", "0.5"},
		{"steer", "--periods", "0"},
		{"steer", "--period", "1ms"},
		{"steer", "--period", "0s"}, // zero is a default in a scenario, out of range on the command line
		{"steer", "--sample", "0"},
		{"steer", "-p", "70000"},
		{"steer", "--domain", "cache"},
		{"steer", "--bogus"},
	} {
		_, errOut, code := runCLI(t, context.Background(), nil, args...)
		if code != ExitError || !strings.Contains(errOut, "redline steer:") {
			t.Errorf("%v: exit %d, stderr %q; want %d and a message", args, code, errOut, ExitError)
		}
	}
}

func TestSteerStatusNotRunning(t *testing.T) {
	_, errOut, code := runCLI(t, context.Background(), nil, "steer", "status", "--status-file", filepath.Join(t.TempDir(), "none.json"))
	if code != ExitFailure || !strings.Contains(errOut, "steer is not running") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestSteerStatusGolden(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "steer")
	out, errOut, code := runCLI(t, context.Background(), nil, "steer", "status", "--status-file", filepath.Join(dir, "status.json"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	testutil.Golden(t, filepath.Join(dir, "status.golden"), []byte(out))
}

// TestSteerExitsWithTheSignal: redline steer stopped by SIGINT exits 130,
// by SIGTERM 143 (128+signal, as the README says of every command), after
// its usual ending; it used to exit 0. --dry-run writes nothing.
func TestSteerExitsWithTheSignal(t *testing.T) {
	testutil.NeedRoot(t)
	tfs, err := steer.OpenTracefs()
	if err != nil {
		t.Skipf("tracefs: %v", err)
	}
	tfs.Close()
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143} {
		status := filepath.Join(t.TempDir(), "steer.json")
		var errb syncBuffer
		cmd := startRedline(t, &errb, "steer", "--dry-run", "--pid", strconv.Itoa(os.Getpid()), "--period", "50ms", "--status-file", status)
		waitFor(t, "steer's first period", func() bool { _, err := os.Stat(status); return err == nil })
		cmd.Process.Signal(sig)
		cmd.Wait()
		if got := cmd.ProcessState.ExitCode(); got != want {
			t.Errorf("steer stopped by %v: exit %d, want %d\n%s", sig, got, want, errb.String())
		}
	}
}
