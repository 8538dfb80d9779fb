// Package atomicfile writes a file so that a reader (or a crash) sees
// either the old content or the new, never half of it: the bytes go to a
// temporary file beside the target, are synced, and the temporary file is
// renamed over the target. The one atomic file write of the tree: results,
// --json documents, reports and status files all use it.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"redline/internal/trusted"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Write writes data to path atomically with mode perm (0644 when zero). A
// missing parent directory is an error: where results go is the caller's
// decision. The parent is held to OwnDir's rule for the directories
// above a results directory (nobody but root and the caller can change
// the path to it, links on the way included): a directory link another
// user planted (-o /tmp/theirs/report.json, /tmp/theirs -> /etc) is
// refused before anything is written. The directory is then opened once
// and the temporary file is created and renamed inside that descriptor,
// so a link already at path is replaced, never written through.
func Write(path string, data []byte, perm os.FileMode) error {
	if perm == 0 {
		perm = 0o644
	}
	dir, err := openParent(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer dir.Close()
	base := filepath.Base(path)
	tmp, name, err := createTemp(dir, base)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer unix.Unlinkat(int(dir.Fd()), name, 0) // after a successful rename there is nothing to remove
	err = writeSync(tmp, data, perm)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(int(dir.Fd()), name, int(dir.Fd()), base)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// openParent checks the directory path goes into, from /, and opens it.
func openParent(path string) (*os.File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(abs)
	if err := safeChain(dir); err != nil {
		return nil, fmt.Errorf("its directory: %w; write into a directory only you and root can change, from / down", err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// createTemp creates a new file named after base in dir, as
// os.CreateTemp does, but relative to dir's descriptor.
func createTemp(dir *os.File, base string) (*os.File, string, error) {
	for range 100 {
		name := "." + base + ".tmp" + strconv.FormatUint(uint64(rand.Uint32()), 10)
		fd, err := unix.Openat(int(dir.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return os.NewFile(uintptr(fd), filepath.Join(dir.Name(), name)), name, nil
	}
	return nil, "", fmt.Errorf("no free temporary name beside %s", base)
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
	if err := safeChain(filepath.Dir(abs)); err != nil {
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
	return safeChain(abs)
}

// safeChain checks every existing directory of the absolute path p, from
// /, each link on the way and what it points to, and what p names if it
// exists (OwnDir's rule for the directories above): it walks p with
// trusted.Walk, as root's rule does, with the caller's rule at each step.
// A component that does not exist ends the check: the caller creates the
// rest, as its own.
func safeChain(p string) error {
	fd, err := trusted.Walk(p, trusted.Visit{
		Dir:  func(at string, _ int, st *unix.Stat_t) error { return safeEntry(at, st) },
		Link: func(at string, st, _ *unix.Stat_t) error { return trustedOwner(at, st) },
		File: func(at string, _ int, st *unix.Stat_t) error { return safeEntry(at, st) },
	})
	switch {
	case err == nil:
		unix.Close(fd)
		return nil
	case errors.Is(err, trusted.ErrDirectory), errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return err
}

// safeEntry: a directory or file owned by root or the caller, that others
// may not write unless it is sticky (/tmp).
func safeEntry(at string, st *unix.Stat_t) error {
	if err := trustedOwner(at, st); err != nil {
		return err
	}
	if st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0 {
		return fmt.Errorf("%s is writable by group or others (and not sticky)", at)
	}
	return nil
}

func trustedOwner(p string, st *unix.Stat_t) error {
	if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is owned by uid %d, neither root nor you (%d)", p, st.Uid, os.Geteuid())
	}
	return nil
}
