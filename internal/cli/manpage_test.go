package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
