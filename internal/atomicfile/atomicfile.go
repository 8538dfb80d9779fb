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
func OwnDir(dir string, perm os.FileMode) error {
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
