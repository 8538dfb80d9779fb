package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"redline/internal/tune"
)

// runnable lists every command that runs something, as "tune apply".
func runnable() [][]string {
	var out [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			p := append(append([]string{}, path...), sub.Name())
			out = append(out, p)
			walk(sub, p)
		}
	}
	walk(newRoot(&streams{}), nil)
	return out
}

// TestUsageErrorsExitTwoEverywhere: an unknown flag or a bad value exited
// 1 in doctor and tune (their "findings" and "change failed" codes) and
// bench; "-h" printed "pflag: help requested" and exited 2 in report and
// inspect. Now every usage error exits 2 and -h is help wherever it is not
// a flag (bench keeps redis-benchmark's -h HOST, workload capture redis-cli's).
func TestUsageErrorsExitTwoEverywhere(t *testing.T) {
	cmds := runnable()
	if len(cmds) < 10 {
		t.Fatalf("found only %d commands: %v", len(cmds), cmds)
	}
	for _, path := range cmds {
		name := strings.Join(path, " ")
		_, errOut, code := runCLI(t, context.Background(), nil, append(path, "--no-such-flag")...)
		if code != ExitError || !strings.Contains(errOut, "unknown flag") {
			t.Errorf("%s --no-such-flag: exit %d, %q; want 2", name, code, errOut)
		}
		if path[0] == "bench" || name == "workload capture" { // -h HOST, as redis-benchmark and redis-cli
			continue
		}
		out, errOut, code := runCLI(t, context.Background(), nil, append(path, "-h")...)
		if code != ExitOK || strings.Contains(out+errOut, "pflag") || !strings.Contains(out, "Usage:") {
			t.Errorf("%s -h: exit %d, %q %q; want help and 0", name, code, out, errOut)
		}
	}
	for _, args := range [][]string{
		{"no-such-command"}, {"tune", "no-such-command"}, {"inspect", "extra"}, {"tune", "apply"},
		{"doctor", "--min-severity", "x"}, {"doctor", "--port", "x"}, {"report", "--format", "x", "f.json"},
		{"lab", "--repetitions", "0"}, {"lab", "--repetitions", "-2"}, {"lab", "--repetitions", "5000"}, {"lab", "--progress", "x"},
	} {
		if _, errOut, code := runCLI(t, context.Background(), nil, args...); code != ExitError {
			t.Errorf("%q: exit %d, %q; want 2", args, code, errOut)
		}
	}
}

// TestTuneRollbackStateDirTypo: "tune rollback --state-dir TYPO" created
// TYPO and said "nothing to roll back"; status and verify said "nothing
// applied" and exited 0. Now each is a usage error and no directory
// appears.
func TestTuneRollbackStateDirTypo(t *testing.T) {
	for _, sub := range []string{"rollback", "status", "verify"} {
		typo := filepath.Join(t.TempDir(), "TYPO")
		_, errOut, code := runCLI(t, context.Background(), nil, "tune", sub, "--state-dir", typo)
		if code != ExitError || !strings.Contains(errOut, "no such directory") {
			t.Errorf("tune %s: exit %d, %q; want 2 naming the directory", sub, code, errOut)
		}
		if _, err := os.Stat(typo); err == nil {
			t.Errorf("tune %s created %s", sub, typo)
		}
	}
}

// TestScenarioYAMLErrorsInUserTerms: a wrong type in a scenario printed
// "cannot unmarshal !!str `abc` into int" or "!!seq into labdata.Scenario".
func TestScenarioYAMLErrorsInUserTerms(t *testing.T) {
	dir := t.TempDir()
	for doc, want := range map[string]string{
		"name: x\nrepetitions: abc\n": `line 2: "abc" is not a whole number`,
		"- a\n- b\n":                  "line 1: found a list, want a mapping",
		"name: x\nwarmup: 5x\n":       `line 2: "5x" is not a duration`,
	} {
		path := filepath.Join(dir, "s.yaml")
		os.WriteFile(path, []byte(doc), 0o644)
		_, errOut, code := runCLI(t, context.Background(), nil, "lab", path)
		if code != ExitError || !strings.Contains(errOut, want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", doc, code, errOut, want)
		}
		for _, bad := range []string{"!!", "unmarshal", "labdata.", "lab.Scenario"} {
			if strings.Contains(errOut, bad) {
				t.Errorf("%q: %q speaks Go/YAML (%s)", doc, errOut, bad)
			}
		}
	}
}

// TestTuneRollbackRefusesAHeldStateDir: while a long-running redline (an
// autotune here) holds the state directory, tune rollback of it refuses
// in one line, exit 2, naming the holder, and writes nothing; --dry-run
// still shows; once the holder is gone, rollback runs.
func TestTuneRollbackRefusesAHeldStateDir(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	hold, err := tune.HoldStateDir(state, "redline autotune")
	if err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI(t, context.Background(), nil, "tune", "rollback", "--state-dir", state)
	if code != ExitError || !strings.Contains(errOut, "in use by redline autotune (pid") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Errorf("rollback of a held directory: exit %d, %q; want 2 naming the autotune in one line", code, errOut)
	}
	if _, errOut, code := runCLI(t, context.Background(), nil, "tune", "rollback", "--state-dir", state, "--dry-run"); code != ExitOK {
		t.Errorf("--dry-run of a held directory: exit %d, %q", code, errOut)
	}
	hold.Release()
	if _, errOut, code := runCLI(t, context.Background(), nil, "tune", "rollback", "--state-dir", state); code != ExitOK {
		t.Errorf("rollback once released: exit %d, %q", code, errOut)
	}
}
