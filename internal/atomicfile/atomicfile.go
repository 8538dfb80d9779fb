// Package atomicfile writes a file so that a reader (or a crash) sees
// either the old content or the new, never half of it: the bytes go to a
// temporary file beside the target, are synced, and the temporary file is
// renamed over the target. The one atomic file write of the tree: results,
// --json documents, reports and status files all use it.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Write writes data to path atomically with mode perm (0644 when zero). A
// missing parent directory is an error: where results go is the caller's
// decision.
func Write(path string, data []byte, perm os.FileMode) error {
	if perm == 0 {
		perm = 0o644
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	err = writeSync(tmp, data, perm)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeSync(f *os.File, data []byte, perm os.FileMode) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	return f.Sync()
}

// OwnDir makes dir (and missing parents, mode perm) or accepts it as it
// is when it already exists, and in both cases requires what makes every
// file later created inside it safe from other users: a real directory
// (not a symlink to one), owned by the caller, writable by nobody else. A
// name chosen in advance in a shared directory (/tmp/redline-lab-DATE)
// made by another user first, or a symlink planted there, is refused
// before anything is written through it. A directory this call creates
// loses the group and world write bits the umask left on it.
//
// The directories above it are held to the same rule (owned by root or
// the caller, writable by nobody else unless sticky like /tmp, a link on
// the way owned by root or the caller, its target's directories too):
// whoever can write a parent can rename the checked directory away and
// put a link to /etc in its place between this check and the writes.
func OwnDir(dir string, perm os.FileMode) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("directory %s: %w", dir, err)
	}
	if err := safeChain(filepath.Dir(abs), 0); err != nil {
		return fmt.Errorf("directory %s: %w; give a directory only you and root can change, from / down", dir, err)
	}
	created := false
	if _, err := os.Lstat(dir); os.IsNotExist(err) {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return fmt.Errorf("directory %s: %w", dir, err)
		}
		if err := os.Mkdir(dir, perm); err != nil {
			return fmt.Errorf("directory %s: %w", dir, err)
		}
		created = true
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("directory %s: %w", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("directory %s: a symlink or a file, not a directory (give a directory of your own)", dir)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("directory %s: owned by uid %d, not by you (%d): another user may have prepared it; give a directory of your own", dir, sys.Uid, os.Geteuid())
	}
	if created {
		return os.Chmod(dir, st.Mode().Perm()&^0o022)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("directory %s: writable by group or others, who could plant links in it; give a directory only you can write (chmod go-w)", dir)
	}
	return nil
}

// Unchangeable reports why another user could change what the path p
// leads to (a directory or link on the way that is neither root's nor
// the caller's, or that others may write and is not sticky), or nil:
// OwnDir's rule for the directories above, applied to p itself too.
func Unchangeable(p string) error {
	abs, err := filepath.Abs(p)
	if err != nil {
		return err
	}
	return safeChain(abs, 0)
}

// safeChain checks every existing directory of the absolute path p, from
// /, and what each link on the way points to (OwnDir's rule for the
// directories above).
func safeChain(p string, depth int) error {
	if depth > 40 {
		return fmt.Errorf("%s: too many links", p)
	}
	cur := "/"
	for _, c := range strings.Split(p, "/") {
		if c == "" || c == "." {
			continue
		}
		next := filepath.Join(cur, c)
		st, err := os.Lstat(next)
		if os.IsNotExist(err) {
			return nil // created below by the caller, as its own
		}
		if err != nil {
			return err
		}
		if err := trustedOwner(next, st); err != nil {
			return err
		}
		if st.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(next)
			if err != nil {
				return err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(cur, target)
			}
			if err := safeChain(target, depth+1); err != nil {
				return err
			}
			if next, err = filepath.EvalSymlinks(next); err != nil {
				return err
			}
		} else if st.Mode().Perm()&0o022 != 0 && st.Mode()&os.ModeSticky == 0 {
			return fmt.Errorf("%s is writable by group or others (and not sticky)", next)
		}
		cur = next
	}
	return nil
}

func trustedOwner(p string, st os.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if ok && sys.Uid != 0 && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is owned by uid %d, neither root nor you (%d)", p, sys.Uid, os.Geteuid())
	}
	return nil
}
