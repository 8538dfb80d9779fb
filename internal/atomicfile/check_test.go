package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckFileAndDir(t *testing.T) {
	dir := t.TempDir()
	afile := filepath.Join(dir, "afile")
	os.WriteFile(afile, nil, 0o644)
	for _, tc := range []struct {
		name, path string
		dir        bool
		want       string // "" for no error
	}{
		{"new file", filepath.Join(dir, "x.json"), false, ""},
		{"existing file", afile, false, ""},
		{"a directory", dir, false, "is a directory"},
		{"parent is a file", filepath.Join(afile, "x"), false, "is not a directory"},
		{"no parent", filepath.Join(dir, "no", "x"), false, "no directory"},
		{"proc", "/proc/x.json", false, "cannot create a file in /proc"},
		{"new dir", filepath.Join(dir, "a", "b"), true, ""},
		{"existing dir", dir, true, ""},
		{"dir under a file", filepath.Join(afile, "a", "b"), true, afile + " is not a directory"},
		{"dir is a file", afile, true, "is not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := CheckFile
			if tc.dir {
				check = CheckDir
			}
			err := check(tc.path)
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("the check left files: %v", ents)
			}
		})
	}
}
