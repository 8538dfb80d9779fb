package secret

import (
	"os"
	"path/filepath"
	"testing"
)

// Issue 24 item 10 held out: ReadFileBeneath opened the scenario's
// directory by name after the scenario was read from it, so the user
// who owns that directory could swap it (or a directory above it of
// theirs) for a link to /etc in between, and a root lab sent the first
// line of /etc/shadow as AUTH to the scenario's server. The swapped
// state is set up here directly: a directory of another user's holding
// a link (theirs) to a root directory with a secret. Where another user
// can change the path, it is now resolved without following links.
func TestReadFileBeneathSwappedDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give a directory to another user")
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	rootDir := filepath.Join(base, "etc")
	os.Mkdir(rootDir, 0o700)
	os.WriteFile(filepath.Join(rootDir, "shadow"), []byte("root:$y$secret-hash:19000::::::\n"), 0o600)
	theirs := filepath.Join(base, "alice")
	os.Mkdir(theirs, 0o755)
	os.Chown(theirs, 65534, 65534)
	swapped := filepath.Join(theirs, "scenarios")
	os.Symlink(rootDir, swapped)
	os.Lchown(swapped, 65534, 65534)
	if pw, err := ReadFileBeneath(swapped, "shadow"); err == nil {
		t.Errorf("read %q through another user's link to a root directory", pw)
	}
	// A real directory of theirs is read as before.
	real := filepath.Join(theirs, "real")
	os.Mkdir(real, 0o755)
	os.WriteFile(filepath.Join(real, "pw"), []byte("pw1\n"), 0o644)
	if pw, err := ReadFileBeneath(real, "pw"); err != nil || pw != "pw1" {
		t.Errorf("a scenario directory of another user's: %q, %v", pw, err)
	}
}
