package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"redline/internal/testutil"
)

// TestManPages: "redline man DIR" (run by make install) writes a page for
// every visible command, with the flags --help shows and none it hides.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := runCLI(t, context.Background(), nil, "man", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	root := newRoot(&streams{})
	for _, path := range runnable() {
		if c, _, _ := root.Find(path); c == nil || c.Hidden {
			continue
		}
		name := "redline-" + strings.Join(path, "-") + ".1"
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !strings.HasPrefix(string(b), ".TH ") || !strings.Contains(string(b), ".SH NAME") {
			t.Errorf("%s: %v\n%s", name, err, b)
		}
	}
	bench, _ := os.ReadFile(filepath.Join(dir, "redline-bench.1"))
	for _, want := range []string{`\-a, \-\-pass string`, `\-\-pass-file FILE`, `\-o, \-\-output FILE`} {
		if !strings.Contains(string(bench), want) {
			t.Errorf("redline-bench.1 lacks %q", want)
		}
	}
	for _, hidden := range []string{`\-\-password`, `\-\-json`} {
		if strings.Contains(string(bench), hidden) {
			t.Errorf("redline-bench.1 lists the hidden %s", hidden)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "redline-man.1")); err == nil {
		t.Error("the hidden man command has a page")
	}
}

// TestManPagesComplete: every page has EXAMPLES, EXIT STATUS, ENVIRONMENT
// and FILES (6 of 23 had examples, none the other three), and none points
// at the source tree's docs/, which make install did not install: the
// pointers go to --docdir, where it now puts them (issue 41). A new
// command gets its sections by one entry in manTable (man_sections.go).
func TestManPagesComplete(t *testing.T) {
	if missing := manUndocumented(newRoot(&streams{})); len(missing) > 0 {
		t.Errorf("commands without an entry (with examples) in manTable, internal/cli/man_sections.go: %v", missing)
	}
	dir := t.TempDir()
	if _, errOut, code := runCLI(t, context.Background(), nil, "man", "--docdir", "/usr/share/doc/redline", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	if len(pages) < 20 {
		t.Fatalf("%d pages", len(pages))
	}
	for _, p := range pages {
		b, _ := os.ReadFile(p)
		for _, sec := range []string{".SH EXAMPLES", ".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH FILES"} {
			if !strings.Contains(string(b), sec+"\n") {
				t.Errorf("%s lacks %s", filepath.Base(p), sec)
			}
		}
		if i := strings.Index(string(b), "docs/"); i >= 0 {
			t.Errorf("%s points at the source tree's docs/: %q", filepath.Base(p), string(b)[max(0, i-40):min(len(b), i+40)])
		}
	}
	doctor, _ := os.ReadFile(filepath.Join(dir, "redline-doctor.1"))
	for _, want := range []string{"REDISCLI_AUTH", "\\-\\-fail\\-on", "/usr/share/doc/redline"} {
		if !strings.Contains(string(doctor), want) && !strings.Contains(string(doctor), strings.ReplaceAll(want, `\-`, "-")) {
			t.Errorf("redline-doctor.1 lacks %q", want)
		}
	}
	apply, _ := os.ReadFile(filepath.Join(dir, "redline-tune-apply.1"))
	if !strings.Contains(string(apply), "/var/lib/redline") {
		t.Error("redline-tune-apply.1's FILES lacks the journal")
	}
}

// TestManPagesGroffClean: every page formats under groff -ww (all
// warnings) as man(1) would, without a warning (bench's list of tests
// could not be broken or adjusted); pages of commands added later are
// checked the same way.
func TestManPagesGroffClean(t *testing.T) {
	testutil.Need(t, "groff")
	dir := t.TempDir()
	if _, errOut, code := runCLI(t, context.Background(), nil, "man", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// a command of tomorrow, with the texts that made troff warn: a long
	// list, a long path, a line starting with a control character
	future := &cobra.Command{Use: "future", Short: "a command added later", Long: ".starts with a dot\n'and a quote\nsee docs/future.md"}
	future.Flags().String("list", "", "one of "+strings.Repeat("alpha,beta,gamma,", 8)+"omega")
	future.Flags().String("path", "", "default /var/lib/redline/a/very/long/path/that/does/not/fit/on/one/line/of/the/terminal/at/all/x.json")
	if err := os.WriteFile(filepath.Join(dir, "redline-future.1"), manPage(future, defaultDocDir), 0o644); err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	if len(pages) == 0 {
		t.Fatal("no pages")
	}
	for _, p := range pages {
		cmd := exec.Command("groff", "-ww", "-man", "-Tutf8", p)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("groff -ww %s: %v\n%s", filepath.Base(p), err, stderr.String())
		}
	}
}
