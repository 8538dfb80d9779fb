package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorPromFile writes the textfile with -o: the whole file, one
// finding series per rule, nothing on standard output.
func TestDoctorPromFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "redline.prom")
	code, stdout, errOut := doctorCLI(t, "doctor", "--root", "../../testdata/hosts/kunpeng920-4node-hinic", "--format", "prom", "-o", out)
	if code == ExitError {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if stdout != "" {
		t.Errorf("standard output with -o: %q", stdout)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"# TYPE redline_doctor_finding gauge\n", `rule="thp-enabled"`, "redline_doctor_errors{", "redline_doctor_last_run_timestamp_seconds{"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	if len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the textfile alone (no temporary left)", len(entries))
	}
}

func TestDoctorFormatErrors(t *testing.T) {
	for _, args := range [][]string{{"--format", "xml"}, {"--format", "prom", "--json"}} {
		code, _, errOut := doctorCLI(t, append([]string{"doctor", "--no-redis"}, args...)...)
		if code != ExitError || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want a one-line usage error", args, code, errOut)
		}
	}
}
