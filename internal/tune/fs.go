package tune

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// FS is where tune reads and writes kernel files. Names are absolute paths
// as on the live host ("/proc/sys/net/core/somaxconn"); an FS maps them
// below its root, so the same plan runs on the live host ("/") and on a
// copy of a fixture tree.
type FS interface {
	ReadFile(name string) ([]byte, error)
	// WriteFile writes data with one write(2) call, as the kernel expects
	// for files under /proc and /sys, without creating the file.
	WriteFile(name string, data []byte) error
	// CheckWrite reports why name cannot be written (missing, read-only
	// mount, no permission), or nil.
	CheckWrite(name string) error
	ReadDir(name string) ([]fs.DirEntry, error)
}

// OSFS is the operating system's files below Root ("/" on the live host).
type OSFS struct{ Root string }

func (o OSFS) path(name string) string { return filepath.Join(o.Root, name) }

// ReadFile reads name below the root.
func (o OSFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(o.path(name)) }

// ReadDir lists name below the root.
func (o OSFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(o.path(name)) }

// WriteFile writes data to an existing file in a single write.
func (o OSFS) WriteFile(name string, data []byte) error {
	f, err := os.OpenFile(o.path(name), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

// CheckWrite asks the kernel whether name may be written: access(2) with
// W_OK reports EROFS for a read-only /proc/sys (containers) even to root.
func (o OSFS) CheckWrite(name string) error {
	p := o.path(name)
	if _, err := os.Stat(p); err != nil {
		return err
	}
	if err := unix.Access(p, unix.W_OK); err != nil {
		return &os.PathError{Op: "access", Path: p, Err: err}
	}
	return nil
}

// isMissing reports whether err means the file or process does not exist.
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH)
}
