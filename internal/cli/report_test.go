package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The report's inputs are the report package's synthetic fixtures.
func reportFixture(name string) string {
	return filepath.Join("..", "report", "testdata", "input", name)
}

func TestReportLabMarkdown(t *testing.T) {
	out, errOut, code := runCLI(t, context.Background(), nil, "report", reportFixture("lab.json"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"# redline lab: loopback", "## Doctor findings", "| 1 | sysctl | `net.core.somaxconn` | `128 → 4096` |", "(×1.102, 10.2% better; too few runs)", "## Runs"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestReportWritesFileInFormatOfExtension(t *testing.T) {
	dir := t.TempDir()
	for ext, prefix := range map[string]string{".html": "<!DOCTYPE html>", ".csv": "seq,variant,workload", ".json": "{", ".md": "# redline lab"} {
		out := filepath.Join(dir, "report"+ext)
		stdout, errOut, code := runCLI(t, context.Background(), nil, "report", reportFixture("lab.json"), "-o", out)
		if code != ExitOK || stdout != "" {
			t.Fatalf("%s: exit %d, stdout %q, stderr %s", ext, code, stdout, errOut)
		}
		b, err := os.ReadFile(out)
		if err != nil || !strings.HasPrefix(string(b), prefix) {
			t.Errorf("%s: %v, starts %q", ext, err, string(b[:min(len(b), 30)]))
		}
		if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v", ext, fi.Mode())
		}
		if !strings.Contains(errOut, "wrote "+out) {
			t.Errorf("%s: stderr %q does not say where the report is", ext, errOut)
		}
	}
}

func TestReportMergeByKernel(t *testing.T) {
	args := []string{"report", "--format", "json", "--by", "kernel"}
	for _, k := range []string{"3.10", "4.19", "5.4", "6.9"} {
		args = append(args, reportFixture("kernel-"+k+".json")+"=v"+k)
	}
	out, errOut, code := runCLI(t, context.Background(), nil, args...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r struct {
		Dimension string   `json:"dimension"`
		Labels    []string `json:"labels"`
		Sources   []struct {
			Label string `json:"label"`
		} `json:"sources"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Dimension != "kernel" || strings.Join(r.Labels, " ") != "v3.10 v4.19 v5.4 v6.9" || len(r.Sources) != 4 || r.Sources[3].Label != "v6.9" {
		t.Errorf("report %+v", r)
	}
}

func TestReportMergeFromFileNames(t *testing.T) {
	out, errOut, code := runCLI(t, context.Background(), nil, "report", "--format", "csv", "--by", "kernel", "--baseline", "6.9",
		reportFixture("kernel-3.10.json"), reportFixture("kernel-6.9.json"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) != 13 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	labels := map[string]bool{}
	for _, row := range rows[1:] {
		labels[row[16]] = true
	}
	if !labels["3.10"] || !labels["6.9"] || len(labels) != 2 {
		t.Errorf("labels %v, want 3.10 and 6.9 from the file names", labels)
	}
}

func TestReportStdin(t *testing.T) {
	b, err := os.ReadFile(reportFixture("kernel-5.4.json"))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, context.Background(), strings.NewReader(string(b)), "report", "--by", "kernel", "--", "-=5.4")
	if code != ExitOK || !strings.Contains(out, "| 5.4 (ref) |") {
		t.Errorf("exit %d, stderr %s", code, errOut)
	}
}

func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notJSON := write("notes.txt", "baseline 105000 rps\n")
	other := write("other.json", `{"name": "x"}`)
	newer := write("newer.json", `{"schema": "redline.lab/v7"}`)
	lab := reportFixture("lab.json")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no files", []string{"report"}, "no results file given"},
		{"missing file", []string{"report", filepath.Join(dir, "nope.json")}, "nope.json: cannot read"},
		{"not JSON", []string{"report", notJSON}, "notes.txt: not a redline results file"},
		{"not a results file", []string{"report", other}, `other.json: not a redline results file (no "schema" field)`},
		{"wrong schema version", []string{"report", newer}, `newer.json: schema "redline.lab/v7" is a version this redline does not read`},
		{"unknown format", []string{"report", lab, "--format", "pdf"}, `unknown format "pdf"`},
		{"unknown extension", []string{"report", lab, "-o", filepath.Join(dir, "r.pdf")}, "cannot tell the format"},
		{"unknown field", []string{"report", lab, "--by", "host.colour"}, "--by host.colour: no such field"},
		{"no label", []string{"report", lab, reportFixture("kernel-3.10.json"), "--by", "allocator"}, "lab.json: --by allocator: no label for this file"},
		{"empty label", []string{"report", "nothing.json="}, "empty label"},
		{"same file twice", []string{"report", lab, lab}, "given twice"},
		{"unknown baseline", []string{"report", lab, "--baseline", "fast"}, "--baseline fast: no such label"},
		{"unknown flag", []string{"report", lab, "--colour"}, "unknown flag: --colour"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, context.Background(), nil, c.args...)
			if code != ExitError {
				t.Errorf("exit %d, want %d", code, ExitError)
			}
			if !strings.Contains(errOut, c.want) || !strings.HasPrefix(errOut, "redline report: ") {
				t.Errorf("stderr %q, want it to contain %q", errOut, c.want)
			}
			if out != "" {
				t.Errorf("wrote %d bytes to stdout on bad input", len(out))
			}
		})
	}
}

// TestReportUnwritableOutput: an -o that cannot be written is refused
// before the inputs are read, as in every command (issue 40): exit 2.
func TestReportUnwritableOutput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "no", "such", "dir", "r.md")
	_, errOut, code := runCLI(t, context.Background(), nil, "report", reportFixture("lab.json"), "-o", out)
	if code != ExitError || !strings.Contains(errOut, "cannot write -o "+out) {
		t.Errorf("exit %d stderr %q", code, errOut)
	}
}
