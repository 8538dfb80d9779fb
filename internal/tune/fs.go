package tune

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"redline/internal/change"
	"redline/internal/tune/beneath"
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

// ReadFile reads name below the root, never through a link out of /proc
// or /sys (see beneath).
func (o OSFS) ReadFile(name string) ([]byte, error) { return beneath.ReadFile(o.Root, name) }

// ReadDir lists name below the root.
func (o OSFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(o.path(name)) }

// WriteFile writes data to an existing file in a single write, resolved
// as ReadFile is.
func (o OSFS) WriteFile(name string, data []byte) error {
	f, err := beneath.Open(o.Root, name, os.O_WRONLY|os.O_TRUNC, 0)
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
	p, err := beneath.Resolve(o.Root, name)
	if err != nil {
		return err
	}
	if err := unix.Access(p, unix.W_OK); err != nil {
		return &os.PathError{Op: "access", Path: p, Err: err}
	}
	return nil
}

// recoverer is an FS that can clean up after a write killed half way
// (simfs: the temporary file beside the target).
type recoverer interface{ Recover(name string) error }

// recoverWrite cleans up after a killed write to c's file, when the FS
// needs that.
func recoverWrite(s *System, c change.Change) error {
	r, ok := s.FS.(recoverer)
	if !ok || (c.Kind != change.KindSysctl && c.Kind != change.KindFile) {
		return nil
	}
	p, err := filePath(c)
	if err != nil {
		return err
	}
	return r.Recover(p)
}

// isMissing reports whether err means the file or process does not exist.
func isMissing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ESRCH)
}
