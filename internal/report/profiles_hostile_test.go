package report

import (
	"golang.org/x/sys/unix"
	"os"
	"path/filepath"
	"testing"
)

// Issue 24, item 13: a result.json from someone else named a profile
// directory of "../../.." and the report embedded a local file of the
// reader's. Only an SVG below the results directory is embedded, not
// through a link out of it.
func TestReportEmbedsOnlyItsOwnFiles(t *testing.T) {
	needOpenat2(t)
	outside := t.TempDir()
	svg := "<svg height=\"10\"><text>secret</text></svg>"
	os.WriteFile(filepath.Join(outside, "x.svg"), []byte(svg), 0o644)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "profiles"), 0o755)
	os.WriteFile(filepath.Join(dir, "profiles", "ok.svg"), []byte(svg), 0o644)
	os.Symlink(filepath.Join(outside, "x.svg"), filepath.Join(dir, "profiles", "link.svg"))
	rel, _ := filepath.Rel(dir, outside)
	for _, tc := range []struct{ dir, name string }{
		{rel, "x.svg"}, {outside, "x.svg"}, {"profiles", "link.svg"}, {"profiles", "../../" + filepath.Base(outside) + "/x.svg"},
	} {
		if got := inlineSVG(dir, resultFile(tc.dir, tc.name)); got != "" {
			t.Errorf("profile dir %q, file %q: embedded %q", tc.dir, tc.name, got)
		}
	}
	if got := inlineSVG(dir, resultFile("profiles", "ok.svg")); got != svg {
		t.Errorf("the results' own flame graph: %q", got)
	}
}

// Issue 24, item 13: a variant named "=HYPERLINK(...)" was a live formula
// in runs.csv; numbers, negative ones too, stay numbers.
func TestCSVCellsAreNotFormulas(t *testing.T) {
	for in, want := range map[string]string{
		`=HYPERLINK("http://x","y")`: `'=HYPERLINK("http://x","y")`, "+1+cmd": "'+1+cmd", "@SUM(A1)": "'@SUM(A1)",
		"-1.5": "-1.5", "+3": "+3", "tuned": "tuned", "": "",
	} {
		if got := csvCell(in); got != want {
			t.Errorf("csvCell(%q) = %q, want %q", in, got, want)
		}
	}
}

// needOpenat2 skips a test that embeds a flame graph where openat2(2),
// which readBeneath needs, does not work: under qemu-user (make
// test-arm64) the call is not passed on to the kernel. The native run
// tests the same code.
func needOpenat2(t *testing.T) {
	t.Helper()
	fd, err := unix.Openat2(unix.AT_FDCWD, ".", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH})
	if err != nil {
		t.Skipf("openat2 does not work here (%v): embedding below the results directory is tested natively", err)
	}
	unix.Close(fd)
}
