package tune

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"redline/internal/atomicfile"
	"redline/internal/change"
)

// persist-file changes: the files that make a plan survive a reboot
// (persist.go), written below the system's root (/ on the live host, the
// tree of a rehearsal), atomically, never through a link. The value ""
// is "no file": restoring it removes the file.

func init() {
	registerKind(change.KindPersist, &kindOps{
		check: checkPersist,
		read:  func(_ context.Context, s *System, c change.Change) (string, error) { return readPersist(s, c) },
		write: writePersist,
	})
}

func persistPath(s *System, c change.Change) (string, error) {
	if err := change.PersistPath(c.Target); err != nil {
		return "", err
	}
	return filepath.Join(s.Root, c.Target), nil
}

func checkPersist(_ context.Context, s *System, c change.Change) error {
	if _, err := persistPath(s, c); err != nil {
		return err
	}
	if strings.HasPrefix(c.Target, "/etc/systemd/system/redline-boot") && c.Value != "" && !strings.HasPrefix(c.Value, change.PersistLinkPrefix) {
		bin, err := change.BootUnitBinary(c.Value)
		if err != nil {
			return err
		}
		self, err := os.Executable()
		if err != nil || filepath.Clean(self) != bin {
			return fmt.Errorf("the boot unit runs %s, not this redline (%s): make the plan with redline tune persist here", bin, self)
		}
	}
	return s.requireRoot()
}

func readPersist(s *System, c change.Change) (string, error) {
	p, err := persistPath(s, c)
	if err != nil {
		return "", err
	}
	st, err := os.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", err
	case st.Mode()&fs.ModeSymlink != 0:
		to, err := os.Readlink(p)
		return change.PersistLinkPrefix + to, err
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file: move it away", p)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(b), "\n"), nil
}

// writePersist writes v (a file's content, a link, or "" for none).
func writePersist(_ context.Context, s *System, c change.Change, v string) error {
	p, err := persistPath(s, c)
	if err != nil {
		return err
	}
	if err := mkdirBelow(s.Root, filepath.Dir(c.Target)); err != nil {
		return err
	}
	switch {
	case v == "":
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	case strings.HasPrefix(v, change.PersistLinkPrefix):
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return os.Symlink(strings.TrimPrefix(v, change.PersistLinkPrefix), p)
	}
	return atomicfile.Write(p, []byte(v+"\n"), 0o644)
}

// mkdirBelow makes dir (absolute, as on the host) below root, refusing a
// link on the way: the files persist writes are root's, in root's
// directories.
func mkdirBelow(root, dir string) error {
	cur := root
	for _, part := range strings.Split(strings.TrimPrefix(dir, "/"), "/") {
		cur = filepath.Join(cur, part)
		st, err := os.Lstat(cur)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := os.Mkdir(cur, 0o755); err != nil {
				return err
			}
		case err != nil:
			return err
		case !st.IsDir():
			return fmt.Errorf("%s is not a directory (a link?): persist writes only through real directories", cur)
		}
	}
	return nil
}
