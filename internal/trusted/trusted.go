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
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Open opens the file at the absolute path p with O_PATH, walking
// from / one component at a time (Walk): every directory crossed owned by
// root and writable by nobody else (so a symlink in it was written by root
// and is followed), the file owned by root and writable by nobody else. It
// is the root rule for anything redline executes.
func Open(p string) (*os.File, error) {
	fd, err := Walk(p, Visit{Dir: dirRootOnly, File: dirRootOnly})
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), p), nil
}

func dirRootOnly(at string, _ int, st *unix.Stat_t) error { return rootOnly(at, st) }

// RootOnly is the rule for one entry a walk reached below a directory
// Open accepted (a build's source tree): owned by root and, unless it is
// a symlink (whose mode means nothing; it is not followed), writable by
// nobody else.
func RootOnly(p string, info fs.FileInfo) error {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%s: no owner to check", p)
	}
	mode := st.Mode
	if info.Mode()&fs.ModeSymlink != 0 {
		mode &^= 0o022
	}
	return rootOnly(p, &unix.Stat_t{Uid: st.Uid, Mode: mode})
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
