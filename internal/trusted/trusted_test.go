package trusted

import (
	"errors"
	"os"
	"path/filepath"
	"redline/internal/testutil"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestWalkFollowsLinksAndVisitsEveryStep: /bin/sh reached through
// links root wrote (/bin -> usr/bin on merged-/usr systems), every
// directory visited from / down, the file at the end; a directory at the
// end and a relative path refused.
func TestWalkFollowsLinksAndVisitsEveryStep(t *testing.T) {
	var dirs []string
	fd, err := Walk("/bin/sh", Visit{Dir: func(at string, _ int, _ *unix.Stat_t) error { dirs = append(dirs, at); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	unix.Fstat(fd, &st)
	unix.Close(fd)
	if st.Mode&unix.S_IFMT != unix.S_IFREG || len(dirs) < 2 || dirs[0] != "/" {
		t.Errorf("mode %o, directories %v", st.Mode, dirs)
	}
	if _, err := Walk("/usr", Visit{}); !errors.Is(err, ErrDirectory) {
		t.Errorf("a directory: %v", err)
	}
	if _, err := Walk("usr/bin/sh", Visit{}); err == nil {
		t.Error("a relative path was walked")
	}
	refuse := errors.New("refused")
	if _, err := Walk("/usr/bin/sh", Visit{File: func(string, int, *unix.Stat_t) error { return refuse }}); !errors.Is(err, refuse) {
		t.Errorf("File's refusal: %v", err)
	}
}

// TestOpenRefusesWhatOthersCanReplace: as root, a program in a directory
// others can write (a user's directory on root's PATH) is refused, and
// one in root's own directory is opened.
func TestOpenRefusesWhatOthersCanReplace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the rule is root's")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o777)
	prog := filepath.Join(dir, "prog")
	os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755)
	if f, err := Open(prog); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		if f != nil {
			f.Close()
		}
		t.Errorf("a program in a 0777 directory: %v", err)
	}
	f, err := Open("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Program("sh"); err != nil {
		t.Error(err)
	}
}

// TestOpenRedisServer: root's rule for a redis-server binary (what a root
// session runs): root's own links are followed, a file under /tmp is not.
func TestOpenRedisServer(t *testing.T) {
	testutil.NeedRoot(t)
	real := testutil.NeedPath(t, "redis-server")
	if f, err := Open(real); err != nil {
		t.Errorf("Open(%s) = %v; root's own links are followed", real, err)
	} else {
		f.Close()
	}
	mine := filepath.Join(t.TempDir(), "redis-server")
	os.WriteFile(mine, []byte("#!/bin/sh\n"), 0o755)
	if f, err := Open(mine); err == nil {
		f.Close()
		t.Errorf("Open(%s) accepted a file under the world-writable /tmp", mine)
	}
	if _, err := Open("/etc/passwd/x"); err == nil {
		t.Error("a path through a file was accepted")
	}
}
