package hostile

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	testName  = regexp.MustCompile("`(Test[A-Za-z0-9_]+)`")
	separator = regexp.MustCompile(`^\|[\s:|-]+$`)
)

// TestEverySurfaceHasItsTest: every test a table row of docs/security.md
// names exists in the tree, and every row names one.
func TestEverySurfaceHasItsTest(t *testing.T) {
	doc, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test[A-Za-z0-9_]+)\(`)
	filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(b, -1) {
			defined[string(m[1])] = true
		}
		return nil
	})
	rows := 0
	lines := strings.Split(string(doc), "\n")
	for i, line := range lines {
		header := i+1 < len(lines) && separator.MatchString(lines[i+1])
		if !strings.HasPrefix(line, "|") || separator.MatchString(line) || header {
			continue
		}
		rows++
		names := testName.FindAllStringSubmatch(line, -1)
		if len(names) == 0 {
			t.Errorf("a boundary without its test: %s", line)
		}
		for _, n := range names {
			if !defined[n[1]] {
				t.Errorf("docs/security.md names %s, which no test file defines", n[1])
			}
		}
	}
	if rows == 0 {
		t.Fatal("docs/security.md has no table rows")
	}
}
