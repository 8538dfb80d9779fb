// Package trusted is the one rule by which a root redline finds and
// opens what it executes: a program (redis-server, its wrappers,
// systemctl, ip, perf, dpkg-query, a load tool, a compiler) must be
// owned by root, writable by nobody else, and so must every directory
// from / to it; a symlink is followed only where root wrote it; a name
// is looked up only in root's system directories, never on PATH, which
// a user may have reached (sudo -E, a root shell that kept a user's
// PATH). Not root, a program runs as its caller and PATH is used as a
// shell would.
package trusted

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// maxLinks bounds the symlinks followed while resolving a path, as the
// kernel's own limit does.
const maxLinks = 40

// Open opens the file at the absolute path p with O_PATH, walking
// from / one component at a time: every directory crossed owned by root
// and writable by nobody else (so a symlink in it was written by root and
// is followed), the file owned by root and writable by nobody else. It is
// the root rule for anything redline executes.
func Open(p string) (*os.File, error) {
	if !filepath.IsAbs(p) {
		return nil, fmt.Errorf("%q: want an absolute path", p)
	}
	dirs := []int{}
	closeAll := func() {
		for _, d := range dirs {
			unix.Close(d)
		}
	}
	root, err := openStep(unix.AT_FDCWD, "/", "/")
	if err != nil {
		return nil, err
	}
	dirs = append(dirs, root)
	rest, links, at := components(p), 0, "/"
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		if c == ".." {
			if len(dirs) > 1 {
				unix.Close(dirs[len(dirs)-1])
				dirs = dirs[:len(dirs)-1]
			}
			at = filepath.Dir(at)
			continue
		}
		at = filepath.Join(at, c)
		fd, err := openStep(dirs[len(dirs)-1], c, at)
		if err != nil {
			closeAll()
			return nil, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			closeAll()
			return nil, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			target, err := readLink(fd)
			unix.Close(fd)
			if links++; err != nil || links > maxLinks {
				closeAll()
				return nil, fmt.Errorf("%s: a symlink that cannot be followed (%v)", at, err)
			}
			at = filepath.Dir(at)
			if strings.HasPrefix(target, "/") {
				for _, d := range dirs[1:] {
					unix.Close(d)
				}
				dirs, at = dirs[:1], "/"
			}
			rest = append(components(target), rest...)
		case unix.S_IFDIR:
			if err := rootOnly(at, &st); err != nil {
				unix.Close(fd)
				closeAll()
				return nil, err
			}
			dirs = append(dirs, fd)
		default:
			if len(rest) > 0 {
				unix.Close(fd)
				closeAll()
				return nil, fmt.Errorf("%s: not a directory", at)
			}
			closeAll()
			if err := rootOnly(at, &st); err != nil {
				unix.Close(fd)
				return nil, err
			}
			return os.NewFile(uintptr(fd), at), nil
		}
	}
	closeAll()
	return nil, fmt.Errorf("%q: a directory, not a file", p)
}

func components(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

func openStep(dir int, name, at string) (int, error) {
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: at, Err: err}
	}
	if name == "/" {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || rootOnly("/", &st) != nil {
			unix.Close(fd)
			return -1, errors.New("/ is not owned by root and writable by root alone")
		}
	}
	return fd, nil
}

func readLink(fd int) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, "", buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// rootOnly is the ownership rule: owned by root, writable by nobody else.
func rootOnly(at string, st *unix.Stat_t) error {
	if st.Uid != 0 {
		return fmt.Errorf("%s is owned by uid %d, not root (as root, redline runs only what root owns from / down)", at, st.Uid)
	}
	if st.Mode&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others (as root, redline runs only what nobody else can replace)", at)
	}
	return nil
}

// Dirs are where a root redline finds the programs it runs by name
// (ip, setpriv, numactl, taskset, systemctl, perf, dpkg-query, the load
// tools), in this order, as sudo's secure_path does: never root's PATH, which a user may have
// reached (sudo -E, a root shell that kept a user's PATH) and which an
// exec through setpriv or ip netns exec would search again.
var Dirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// Program resolves a program redline runs. As root: the first
// Dirs/name that Open accepts (root owns it and every
// directory from /, nobody else can write them, a symlink on the way was
// written by root) and that is an executable file; a name already given
// as an absolute path must pass the same rule. The path returned is safe
// to exec by name: nobody but root can change what it resolves to.
// Not root, the program runs as the caller: PATH, as a shell would.
func Program(name string) (string, error) {
	if os.Geteuid() != 0 {
		return exec.LookPath(name)
	}
	cands := []string{name}
	if !filepath.IsAbs(name) {
		if strings.Contains(name, "/") {
			return "", fmt.Errorf("%s: want a program name or an absolute path", name)
		}
		cands = cands[:0]
		for _, d := range Dirs {
			cands = append(cands, filepath.Join(d, name))
		}
	}
	var refused []string
	for _, p := range cands {
		f, err := Open(p)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				refused = append(refused, err.Error())
			}
			continue
		}
		var st unix.Stat_t
		err = unix.Fstat(int(f.Fd()), &st)
		f.Close()
		if err == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mode&0o111 != 0 {
			return p, nil
		}
	}
	if len(refused) > 0 {
		return "", fmt.Errorf("%s: %s", name, strings.Join(refused, "; "))
	}
	return "", fmt.Errorf("%s: not found in %s (as root, redline runs it only from root's system directories, not from PATH)", name, strings.Join(Dirs, ", "))
}
