package cli

import (
	"os"
	"path/filepath"
	"testing"

	"redline/internal/labdata"
)

// Issue 35, item 5: the lab wrote report.md through a symbolic link
// already in the results directory (its target was overwritten) while
// result.json replaced its link. Every report now replaces the link.
func TestLabReportsReplaceLinks(t *testing.T) {
	res, err := labdata.ReadResult("../report/testdata/input/lab.json")
	if err != nil {
		t.Fatal(err)
	}
	dir, elsewhere := t.TempDir(), t.TempDir()
	for _, name := range []string{"report.md", "report.html", "runs.csv"} {
		target := filepath.Join(elsewhere, name)
		if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := writeLabReports(dir, res); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"report.md", "report.html", "runs.csv"} {
		if b, _ := os.ReadFile(filepath.Join(elsewhere, name)); string(b) != "keep" {
			t.Errorf("%s: written through the link", name)
		}
		if st, err := os.Lstat(filepath.Join(dir, name)); err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s: not replaced by a regular file (%v)", name, err)
		}
	}
}
