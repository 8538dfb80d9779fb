package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// CheckFile reports, before any work, whether Write(path) can succeed
// where it is decided by the path alone: the parent is an existing
// directory in which this process can create a file with Write's
// temporary name, and path is not a directory. It creates and removes
// one such temporary file, since only the kernel knows what a read-only
// mount, /proc or an ACL allows. The error says what is wrong, without
// the path (the caller names the flag and the path).
func CheckFile(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return errors.New("it is a directory")
	}
	parent := filepath.Dir(path)
	if err := isDir(parent); err != nil {
		return err
	}
	return canCreateIn(parent, filepath.Base(path))
}

// CheckDir reports, before any work, whether files can be written into
// dir: an existing directory where this process can create files, or a
// path whose nearest existing ancestor is such a directory (OwnDir or
// MkdirAll creates the rest). It creates nothing but one temporary file,
// removed at once.
func CheckDir(dir string) error {
	at := dir
	for {
		st, err := os.Stat(at)
		switch {
		case err == nil && !st.IsDir():
			return fmt.Errorf("%s is not a directory", at)
		case err == nil:
			return canCreateIn(at, "check")
		case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return err
		}
		up := filepath.Dir(at)
		if up == at {
			return err
		}
		at = up
	}
}

// isDir says why dir is not an existing directory, or nil.
func isDir(dir string) error {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no directory %s", dir)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// canCreateIn creates and removes a temporary file named as Write names
// its own for base.
func canCreateIn(dir, base string) error {
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot create a file in %s: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
