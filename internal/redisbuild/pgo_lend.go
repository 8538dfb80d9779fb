package redisbuild

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"redline/internal/redisserver"
)

// lendProfileDir hands the profile directory to the user a root redline
// runs its servers as (redisserver.ServerUser), since the instrumented
// server writes its profile there as it exits; the returned function
// gives the directory and what was written in it back to root before the
// compiler reads it (reclaimDir). Not root: the server is this user,
// nothing to lend.
func lendProfileDir(dir string) (func() error, error) {
	if os.Geteuid() != 0 {
		return func() error { return nil }, nil
	}
	u, err := redisserver.ServerUser()
	if err != nil {
		return nil, err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, fmt.Errorf("pgo: hand %s to %s for the training run: %w", dir, u.Username, err)
	}
	return func() error {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("pgo: take %s back: %w", dir, err)
		}
		defer unix.Close(fd)
		if err := reclaimDir(fd, 0); err != nil {
			return fmt.Errorf("pgo: take %s back: %w", dir, err)
		}
		return nil
	}, nil
}

// maxProfileDepth bounds the directories reclaimDir descends: gcc and
// clang write their profiles flat, or a few levels deep.
const maxProfileDepth = 16

// reclaimDir gives the open directory dirfd and everything in it back to
// root, through descriptors only: whoever owned it could have made it (or
// a directory below) writable by all, planted links, FIFOs or devices,
// and could go on writing while the compiler reads. So each directory is
// first made root's and 0755 (no entry can then change under the walk),
// then its entries are taken one by one, never by a path from the top:
// a directory is opened without following links and reclaimed the same
// way, a regular file opened without following links (and without
// blocking) is made root's and 0644, anything else is removed.
func reclaimDir(dirfd, depth int) error {
	if depth > maxProfileDepth {
		return fmt.Errorf("directories nested deeper than %d", maxProfileDepth)
	}
	if err := unix.Fchown(dirfd, 0, 0); err != nil {
		return err
	}
	if err := unix.Fchmod(dirfd, 0o755); err != nil {
		return err
	}
	names, err := dirNames(dirfd)
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := reclaimEntry(dirfd, name, depth); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func reclaimEntry(dirfd int, name string, depth int) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		return reclaimDir(fd, depth+1)
	case unix.S_IFREG:
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return fmt.Errorf("not a regular file (%v)", err)
		}
		if err := unix.Fchown(fd, 0, 0); err != nil {
			return err
		}
		return unix.Fchmod(fd, 0o644)
	default: // links, FIFOs, sockets, devices: not the server's to leave
		return unix.Unlinkat(dirfd, name, 0)
	}
}

// dirNames lists the open directory dirfd, read through a duplicate that
// os.File may close.
func dirNames(dirfd int) ([]string, error) {
	dup, err := unix.Dup(dirfd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(dup), filepath.Join("/proc/self/fd", strconv.Itoa(dirfd)))
	defer f.Close()
	return f.Readdirnames(-1)
}
