package trusted

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// maxLinks bounds the symlinks followed while resolving a path, as the
// kernel's own limit does.
const maxLinks = 40

// Visit is what a Walk asks at each step; a nil func allows the step.
// Each gets the path so far and the O_PATH descriptor and stat of what it
// is about (valid during the call only).
type Visit struct {
	// Dir is called for every directory the walk enters, / first,
	// before anything is looked up in it.
	Dir func(at string, fd int, st *unix.Stat_t) error
	// Link is called for every symlink before it is followed, with the
	// stat of the directory it is in.
	Link func(at string, st, dir *unix.Stat_t) error
	// File is called for what the path names at its end (not a
	// directory, not a link).
	File func(at string, fd int, st *unix.Stat_t) error
}

// Walk resolves the absolute path p as the kernel would, but one
// component at a time with O_PATH|O_NOFOLLOW descriptors, following
// symlinks itself (at most 40) and asking v at every step, so that what
// is checked is what is reached: no directory or link swapped between
// the check and the use moves it. It returns an O_PATH descriptor of the
// file at the end, for the caller to use (exec, connect) and close.
// Open (root's rule for programs) and the session's check of a unix
// socket for the user who ran sudo both walk through it.
func Walk(p string, v Visit) (int, error) {
	if !filepath.IsAbs(p) {
		return -1, fmt.Errorf("%q: want an absolute path", p)
	}
	root, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: "/", Err: err}
	}
	// dirs are the descriptors of the directories from / to the current
	// one (for ".."), stats their stats.
	dirs, stats := []int{root}, []unix.Stat_t{{}}
	closeAll := func() {
		for _, d := range dirs {
			unix.Close(d)
		}
	}
	enter := func(at string, fd int) error {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		if v.Dir != nil {
			if err := v.Dir(at, fd, &st); err != nil {
				return err
			}
		}
		stats[len(stats)-1] = st
		return nil
	}
	if err := enter("/", root); err != nil {
		closeAll()
		return -1, err
	}
	rest, links, at := components(p), 0, "/"
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		if c == ".." {
			if len(dirs) > 1 {
				unix.Close(dirs[len(dirs)-1])
				dirs, stats = dirs[:len(dirs)-1], stats[:len(stats)-1]
				at = filepath.Dir(at)
			}
			continue
		}
		next := filepath.Join(at, c)
		fd, err := unix.Openat(dirs[len(dirs)-1], c, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			closeAll()
			return -1, &os.PathError{Op: "open", Path: next, Err: err}
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			closeAll()
			return -1, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			if v.Link != nil {
				if err := v.Link(next, &st, &stats[len(stats)-1]); err != nil {
					unix.Close(fd)
					closeAll()
					return -1, err
				}
			}
			target, err := readLink(fd)
			unix.Close(fd)
			if links++; err != nil || links > maxLinks || target == "" {
				closeAll()
				return -1, fmt.Errorf("%s: a symlink that cannot be followed (%v)", next, err)
			}
			if strings.HasPrefix(target, "/") {
				for _, d := range dirs[1:] {
					unix.Close(d)
				}
				dirs, stats, at = dirs[:1], stats[:1], "/"
			}
			rest = append(components(target), rest...)
		case unix.S_IFDIR:
			dirs, stats, at = append(dirs, fd), append(stats, unix.Stat_t{}), next
			if err := enter(next, fd); err != nil {
				closeAll()
				return -1, err
			}
		default:
			closeAll()
			if len(rest) > 0 {
				unix.Close(fd)
				return -1, fmt.Errorf("%s: not a directory", next)
			}
			if v.File != nil {
				if err := v.File(next, fd, &st); err != nil {
					unix.Close(fd)
					return -1, err
				}
			}
			return fd, nil
		}
	}
	closeAll()
	return -1, fmt.Errorf("%s: %w", p, ErrDirectory)
}

// ErrDirectory is Walk's error for a path that ends at a directory.
var ErrDirectory = errors.New("a directory, not a file")

func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

func readLink(fd int) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
