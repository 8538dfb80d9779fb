package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteReplacesWholeAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new content\n"), 0); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new content\n" {
		t.Fatalf("read back %q, %v", got, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestWriteMissingDirectoryIsAnError(t *testing.T) {
	if err := Write(filepath.Join(t.TempDir(), "no", "such", "file"), []byte("x"), 0); err == nil {
		t.Fatal("wrote into a directory that does not exist")
	}
}

// Issue 24, item 6: a results directory named in advance in a shared
// directory, made first by another user or replaced by a symlink, is
// refused before anything is written through it.
func TestOwnDirRefusesWhatOthersPrepared(t *testing.T) {
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	if err := os.Mkdir(victim, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "redline-lab-20260101-000000")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := OwnDir(link, 0o755); err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("a symlink: %v", err)
	}
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if err := OwnDir(open, 0o755); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("a world-writable directory: %v", err)
	}
	if os.Geteuid() == 0 {
		theirs := filepath.Join(base, "theirs")
		os.Mkdir(theirs, 0o755)
		os.Chown(theirs, 65534, 65534)
		if err := OwnDir(theirs, 0o755); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Errorf("another user's directory: %v", err)
		}
	}
	fresh := filepath.Join(base, "a", "b")
	old := syscall.Umask(0)
	err := OwnDir(fresh, 0o777)
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm()&0o022 != 0 {
		t.Errorf("a new directory is %v, want no group or world write", st.Mode().Perm())
	}
	if err := OwnDir(fresh, 0o755); err != nil {
		t.Errorf("one's own directory, again: %v", err)
	}
}

// Write replaces a symlink planted at the target's name; it never writes
// through it.
func TestWriteReplacesAPlantedLink(t *testing.T) {
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	os.WriteFile(victim, []byte("root's"), 0o600)
	target := filepath.Join(base, "out.hgrm")
	os.Symlink(victim, target)
	if err := Write(target, []byte("new"), 0); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "root's" {
		t.Fatalf("the link's target was overwritten: %q", b)
	}
	if st, _ := os.Lstat(target); st.Mode()&os.ModeSymlink != 0 {
		t.Fatal("the link is still there")
	}
}

// Issue 24 item 6 held out: OwnDir checked only the last component, so
// a root redline writing its results under another user's directory
// (/home/alice/runs/x, --dir there, a results tree in a user's tmp
// directory) accepted a directory that user can rename away and replace
// with a link to /etc between the check and the writes. Every directory
// above it must be root's or the caller's and writable by nobody else,
// unless sticky (/tmp), and so must the links on the way.
func TestOwnDirRefusesAnotherUsersParent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	theirs := filepath.Join(base, "alice")
	os.Mkdir(theirs, 0o755)
	os.Chown(theirs, 65534, 65534)
	if err := OwnDir(filepath.Join(theirs, "redline-lab-x"), 0o755); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Errorf("a directory inside another user's: %v", err)
	}
	if err := OwnDir(filepath.Join(theirs, "a", "b"), 0o755); err == nil {
		t.Error("a directory two levels inside another user's was accepted")
	}
	link := filepath.Join(base, "link")
	os.Symlink(theirs, link)
	if err := OwnDir(filepath.Join(link, "x"), 0o755); err == nil {
		t.Error("a directory through a link into another user's directory was accepted")
	}
	theirLink := filepath.Join(base, "theirlink")
	mine := filepath.Join(base, "mine")
	os.Mkdir(mine, 0o755)
	os.Symlink(mine, theirLink)
	os.Lchown(theirLink, 65534, 65534)
	if err := OwnDir(filepath.Join(theirLink, "x"), 0o755); err == nil {
		t.Error("a directory through another user's link was accepted")
	}
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	if err := OwnDir(filepath.Join(open, "x"), 0o755); err == nil {
		t.Error("a directory inside a world-writable, not sticky, directory was accepted")
	}
	sticky := filepath.Join(base, "tmp")
	os.Mkdir(sticky, 0o777)
	os.Chmod(sticky, 0o777|os.ModeSticky)
	if err := OwnDir(filepath.Join(sticky, "x"), 0o755); err != nil {
		t.Errorf("a directory of one's own in a sticky one like /tmp: %v", err)
	}
}

// Issue 35, item 5: a single-file output (doctor -o, report -o, tune plan
// -o, bench --hdr-out) went through a parent directory link another user
// planted. The results directories' rule now holds for every output's
// directory; a link at the file itself is replaced, not written through.
func TestWriteRefusesAPlantedParent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the plant is another user's")
	}
	base := t.TempDir()
	os.Chmod(base, os.ModeSticky|0o777) // a shared directory, as /tmp
	victim := filepath.Join(t.TempDir(), "etc")
	if err := os.Mkdir(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "out")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(link, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(base, "theirs")
	os.Mkdir(theirs, 0o755)
	os.Chown(theirs, 65534, 65534)
	for _, p := range []string{filepath.Join(link, "report.json"), filepath.Join(theirs, "report.json")} {
		if err := Write(p, []byte("x"), 0); err == nil || !strings.Contains(err.Error(), "owned by uid 65534") {
			t.Errorf("%s: %v; want the directory refused", p, err)
		}
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 0 {
		t.Errorf("written through the link: %v", entries)
	}
}

func TestWriteReplacesALinkAtThePath(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o600)
	p := filepath.Join(dir, "report.md")
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new"), 0); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target was overwritten: %q", b)
	}
	if st, _ := os.Lstat(p); !st.Mode().IsRegular() {
		t.Errorf("%s is %v, want a regular file", p, st.Mode())
	}
}
