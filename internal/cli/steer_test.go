package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/testutil"
)

func TestSteerRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"steer", "--sample", "3"},
		{"steer", "--majority", "0.5"},
		{"steer", "--periods", "0"},
		{"steer", "--period", "1ms"},
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
