package cli

import (
	"context"
	"runtime"
	"strings"
	"testing"
)

// TestOneNamePerIdea: the same idea had different names in different
// commands (--iface/--nic, -o/--out/--output, -v verbose/version,
// --json FILE/--json). The canonical names are shown in help; the old ones
// still parse, are hidden, and bind the same value.
func TestOneNamePerIdea(t *testing.T) {
	root := newRoot(&streams{})
	cases := []struct {
		cmd      []string
		old, new string
	}{
		{[]string{"bench"}, "password", "pass"},
		{[]string{"bench"}, "json", "output"},
		{[]string{"doctor"}, "iface", "nic"},
		{[]string{"doctor"}, "shorthand-v", "verbose"},
		{[]string{"lab"}, "out", "output"},
		{[]string{"profile"}, "out", "output"},
		{[]string{"profile"}, "password", "pass"},
	}
	for _, c := range cases {
		cmd, _, err := root.Find(c.cmd)
		if err != nil {
			t.Fatal(err)
		}
		fs := cmd.Flags()
		oldF, newF := fs.Lookup(c.old), fs.Lookup(c.new)
		if oldF == nil || newF == nil || !oldF.Hidden || newF.Hidden {
			t.Errorf("%s: --%s should be hidden and --%s shown", c.cmd[0], c.old, c.new)
			continue
		}
		if oldF.Value != newF.Value && c.cmd[0] != "bench" { // bench's share the variable, not the Value
			t.Errorf("%s: --%s and --%s do not share a value", c.cmd[0], c.old, c.new)
		}
	}
	// The shared names mean the same everywhere they appear.
	for path, want := range map[string]map[string]string{
		"bench":       {"a": "pass", "o": "output", "v": "version"},
		"doctor":      {"a": "pass", "v": "shorthand-v"},
		"lab":         {"o": "output"},
		"profile":     {"a": "pass", "o": "output"},
		"report":      {"o": "output"},
		"tune plan":   {"o": "output"},
		"tune status": {},
	} {
		cmd, _, _ := root.Find(strings.Fields(path))
		for short, name := range want {
			if f := cmd.Flags().ShorthandLookup(short); f == nil || f.Name != name {
				t.Errorf("%s -%s: %v, want --%s", path, short, f, name)
			}
		}
		if f := cmd.Flags().Lookup("json"); f != nil && !f.Hidden && f.Value.Type() != "bool" {
			t.Errorf("%s --json takes a %s; --json everywhere means 'print JSON'", path, f.Value.Type())
		}
		if f := cmd.Flags().Lookup("iface"); f != nil && !f.Hidden {
			t.Errorf("%s shows --iface; the NIC is --nic everywhere", path)
		}
	}
}

func TestRenamedFlagsStillWork(t *testing.T) {
	_, errOut, code := runCLI(t, context.Background(), nil, "doctor", "--no-redis", "--root", "/no/such", "-v", "--iface", "eth0")
	if code != ExitError || !strings.Contains(errOut, "-v is now --verbose") || !strings.Contains(errOut, "--iface is now --nic") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	out, _, code := runCLI(t, context.Background(), nil, "doctor", "--help")
	if code != 0 || strings.Contains(out, "iface") || strings.Contains(out, "-v,") || !strings.Contains(out, "--nic") {
		t.Errorf("doctor --help shows old names or lacks --nic:\n%s", out)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		out, errOut, code := runCLI(t, context.Background(), nil, args...)
		if code != 0 || !strings.HasPrefix(out, "redline ") || !strings.Contains(out, "\ncommit ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("%v: exit %d, %q %q", args, code, out, errOut)
		}
	}
}

func TestReportJSONFlag(t *testing.T) {
	out, errOut, code := runCLI(t, context.Background(), nil, "report", reportFixture("lab.json"), "--json")
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "{") {
		t.Errorf("report --json: exit %d, %q %.80q", code, errOut, out)
	}
	if _, _, code := runCLI(t, context.Background(), nil, "report", reportFixture("lab.json"), "--json", "--format", "md"); code != ExitError {
		t.Errorf("--json with --format md: exit %d, want 2", code)
	}
}

// TestMistypedFlagSuggests: a mistyped flag or command is a one-line usage
// error (exit 2) naming what was probably meant.
func TestMistypedFlagSuggests(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--thread", "2"}, "redline bench: unknown flag: --thread; did you mean --threads? (see redline bench --help)\n"},
		{[]string{"tune", "status", "--jsn"}, "did you mean --json?"},
		{[]string{"lab", "-progres", "none"}, "did you mean --progress?"},
		{[]string{"bench", "-Q"}, "did you mean -q?"},
		{[]string{"tnue"}, "redline: unknown command \"tnue\" for \"redline\"; did you mean tune? (see redline --help)\n"},
	} {
		_, errOut, code := runCLI(t, context.Background(), nil, c.args...)
		if code != ExitError || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, errOut, c.want)
		}
	}
	_, errOut, _ := runCLI(t, context.Background(), nil, "bench", "--zzzz")
	if strings.Contains(errOut, "did you mean") {
		t.Errorf("nothing close to --zzzz, yet: %q", errOut)
	}
}
