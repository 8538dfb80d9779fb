package cli

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"redline/internal/redistest"
	"redline/internal/secret"
)

// noSecret fails the test when any of the texts holds the password.
func noSecret(t *testing.T, what, pw string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, pw) {
			t.Errorf("%s leaks the password %q:\n%s", what, pw, s)
		}
	}
}

// TestBenchJSONAndReportRedactPasswords: bench --json kept "-a PW" in its
// command line (and requirepass in the server's config), and report
// rendered it into Markdown and HTML. Files written before redaction are
// redacted when rendered.
func TestBenchJSONAndReportRedactPasswords(t *testing.T) {
	const pw = "sekret-pw-1"
	s := redistest.Start(t, "requirepass "+pw)
	dir := t.TempDir()
	js := filepath.Join(dir, "b.json")
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-a", pw, "-n", "100", "-t", "set", "-q", "--progress", "none", "--json", js)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	raw, _ := os.ReadFile(js)
	noSecret(t, "bench --json", pw, string(raw))
	if !strings.Contains(string(raw), `"-a",`) || !strings.Contains(string(raw), secret.Marker) {
		t.Errorf("the command line should keep -a with the password redacted:\n%s", raw)
	}
	old := filepath.Join(dir, "old.json")
	os.WriteFile(old, []byte(strings.ReplaceAll(string(raw), secret.Marker, pw)), 0o644)
	for _, f := range []string{js, old} {
		for _, format := range []string{"md", "html", "csv", "json"} {
			out, errOut, code := runCLI(t, context.Background(), nil, "report", f, "--format", format)
			if code != 0 {
				t.Fatalf("report %s: exit %d: %s", format, code, errOut)
			}
			noSecret(t, "report --format "+format+" of "+filepath.Base(f), pw, out, errOut)
		}
	}
}

func TestBenchPasswordFromFileAndEnv(t *testing.T) {
	const pw = "sekret-pw-2"
	s := redistest.Start(t, "requirepass "+pw)
	file := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(file, []byte(pw+"\n"), 0o600)
	args := []string{"bench", "-p", port(s), "-n", "10", "-t", "set", "-q", "--progress", "none"}
	if _, errOut, code := runCLI(t, context.Background(), nil, append(args, "--pass-file", file)...); code != 0 {
		t.Errorf("--pass-file: exit %d: %s", code, errOut)
	}
	t.Setenv(secret.EnvVar, pw)
	if _, errOut, code := runCLI(t, context.Background(), nil, args...); code != 0 {
		t.Errorf("REDISCLI_AUTH: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, context.Background(), nil, append(args, "--password", pw)...); code != 0 || !strings.Contains(errOut, "--password is now --pass") {
		t.Errorf("--password (deprecated spelling): exit %d: %s", code, errOut)
	}
}

// TestDoctorDoesNotPrintPassword: doctor -a PW printed "AUTH PW: WRONGPASS".
func TestDoctorDoesNotPrintPassword(t *testing.T) {
	const pw = "wrong-pw-3"
	s := redistest.Start(t, "requirepass right-pw")
	for _, args := range [][]string{
		{"-a", pw}, {"--pass", pw}, {"--user", "default", "-a", pw}, {"--pass=" + pw, "--json"},
	} {
		code, out, errOut := doctorCLI(t, append([]string{"doctor", "--host", s.Host, "--port", strconv.Itoa(s.Port)}, args...)...)
		if code != ExitError || !strings.Contains(out+errOut, "WRONGPASS") {
			t.Errorf("%q: exit %d, want 2 naming WRONGPASS\n%s%s", args, code, out, errOut)
		}
		noSecret(t, "doctor "+strings.Join(args, " "), pw, out, errOut)
	}
	file := filepath.Join(t.TempDir(), "pw")
	os.WriteFile(file, []byte("right-pw\n"), 0o600)
	if code, _, errOut := doctorCLI(t, "doctor", "--host", s.Host, "--port", strconv.Itoa(s.Port), "--pass-file", file, "--rule", "slowlog-off"); code == ExitError {
		t.Errorf("--pass-file: exit %d: %s", code, errOut)
	}
	t.Setenv(secret.EnvVar, "right-pw")
	if code, _, errOut := doctorCLI(t, "doctor", "--host", s.Host, "--port", strconv.Itoa(s.Port), "--rule", "slowlog-off"); code == ExitError {
		t.Errorf("REDISCLI_AUTH: exit %d: %s", code, errOut)
	}
}

// TestLabRedactsPasswords: a scenario's workload lines and server config
// are saved in result.json and rendered by report; neither may hold the
// password, nor may an error that quotes a bad workload line.
func TestLabRedactsPasswords(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	const pw = "sekret-pw-4"
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "pw"), []byte(pw+"\n"), 0o600)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: x\nworkloads: [{name: a, bench: \"-a "+pw+" -t nosuch\"}]\nvariants: [{name: b, baseline: true}]\n"), 0o644)
	_, stderr, code := runCLI(t, context.Background(), nil, "lab", bad)
	if code != ExitError || !strings.Contains(stderr, "nosuch") {
		t.Errorf("bad workload: exit %d, %s", code, stderr)
	}
	noSecret(t, "lab's error about a workload line", pw, stderr)

	scenario := filepath.Join(dir, "s.yaml")
	os.WriteFile(scenario, []byte(`
name: with-password
target: {kind: managed, password_file: pw}
server: {config: ["requirepass `+pw+`"]}
workloads: [{name: set, bench: "redis-benchmark -a `+pw+` -t set -c 2 -n 200"}]
variants: [{name: baseline, baseline: true}, {name: same, server: {config: ["requirepass `+pw+`", "hz 11"]}}]
repetitions: 1
doctor: false
`), 0o644)
	out := filepath.Join(dir, "out")
	// requirepass in a config line is the scenario author's own: trusted.
	stdout, stderr, code := runCLI(t, context.Background(), nil, "lab", scenario, "--out", out, "--progress", "none", "--trust-scenario")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	noSecret(t, "lab output", pw, stdout, stderr)
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(out, e.Name()))
		noSecret(t, e.Name(), pw, string(b))
	}
	if len(entries) < 2 {
		t.Errorf("lab wrote %d files, want result.json and reports", len(entries))
	}
}

// TestTunePassFile: every tune subcommand that may talk to Redis takes
// --pass-file, and a file that cannot give a password stops it (exit 2)
// before anything is read or written.
func TestTunePassFile(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	for _, sub := range [][]string{{"plan", "--profile", "redis-config"}, {"apply", "plan.yaml"}, {"status"}, {"verify"}, {"rollback"}} {
		args := append(append([]string{"tune"}, sub...), "--state-dir", filepath.Join(dir, "state"), "--pass-file", empty)
		if sub[0] == "plan" {
			args = append(append([]string{"tune"}, sub...), "--pass-file", empty)
		}
		_, errOut, code := runCLI(t, context.Background(), nil, args...)
		if code != ExitError || !strings.Contains(errOut, "password file is empty") {
			t.Errorf("%v: exit %d, %s; want 2 naming the empty password file", args, code, errOut)
		}
	}
}
