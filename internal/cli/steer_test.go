package cli

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateSteer = flag.Bool("update-steer", false, "rewrite testdata/steer/status.golden")

func TestSteerRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"steer", "--sample", "3"},
		{"steer", "--majority", "0.5"},
		{"steer", "--periods", "0"},
		{"steer", "--period", "1ms"},
		{"steer", "-p", "70000"},
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
	golden := filepath.Join(dir, "status.golden")
	if *updateSteer {
		if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), out); d != "" {
		t.Errorf("steer status (-want +got):\n%s", d)
	}
}
