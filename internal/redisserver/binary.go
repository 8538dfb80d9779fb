package redisserver

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// debianServer is where Debian's redis-tools package puts the server
// binary: redis-server is a link to it made by the redis-server package,
// which also starts a Redis on 6379 as a service. Redis picks its mode from
// argv[0], so redline runs it through a link named redis-server.
const debianServer = "redis-check-rdb"

// lookServer resolves the server binary: name on PATH, or without a name
// redis-server, else redis-tools' redis-check-rdb.
func lookServer(name string) (string, error) {
	if name == "" {
		if p, err := exec.LookPath("redis-server"); err == nil {
			return p, nil
		}
		if p, err := exec.LookPath(debianServer); err == nil {
			return p, nil
		}
		name = "redis-server"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("redis-server binary %q not found (install it: apt-get install --no-install-recommends redis-tools, or pass the path): %w", name, err)
	}
	return p, nil
}

// The redis-server binary is resolved once and the descriptor that was
// checked is the one executed: a root session or a root lab never looks
// the name up again, so no symlink swapped between the check and the exec
// (a directory of the invoking user's, a stale-directory sweep in
// between) can make root run another program.
//
// The rule when redline is root (TrustedBinary): every component from /
// is resolved with O_NOFOLLOW; each directory crossed must be owned by
// root and writable by nobody else, so a symlink met on the way can only
// have been written by root and is followed; the file itself must be a
// regular executable owned by root and writable by nobody else.

// maxLinks bounds the symlinks followed while resolving a binary, as the
// kernel's own limit does.
const maxLinks = 40

// binary is a resolved redis-server: the open O_PATH descriptor and the
// name it was asked by (whose base names the process, redis-server*).
type binary struct {
	f    *os.File
	name string
}

// CheckBinary reports whether Start would run name (a path or a name on
// PATH): found, an executable regular file, and, when redline is root and
// anyOwner is false, owned by root through and through (the rule above).
// The session calls it to refuse a start early; Start checks again the
// descriptor it executes.
func CheckBinary(name string, anyOwner bool) error {
	b, err := openBinary(name, anyOwner)
	if err != nil {
		return err
	}
	return b.f.Close()
}

func openBinary(name string, anyOwner bool) (*binary, error) {
	p, err := lookServer(name)
	if err != nil {
		return nil, err
	}
	if p, err = filepath.Abs(p); err != nil {
		return nil, err
	}
	var f *os.File
	if anyOwner || os.Geteuid() != 0 {
		f, err = openPath(p)
	} else {
		f, err = OpenTrusted(p)
	}
	if err != nil {
		return nil, fmt.Errorf("redis-server binary %q: %w", p, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o111 == 0 {
		f.Close()
		return nil, fmt.Errorf("redis-server binary %q: not an executable file", p)
	}
	base := filepath.Base(p)
	if base == debianServer {
		base = "redis-server" // Redis picks its mode from argv[0]
	}
	return &binary{f: f, name: base}, nil
}

func openPath(p string) (*os.File, error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

// OpenTrusted opens the file at the absolute path p with O_PATH, walking
// from / one component at a time: every directory crossed owned by root
// and writable by nobody else (so a symlink in it was written by root and
// is followed), the file owned by root and writable by nobody else. It is
// the root rule for anything redline executes.
func OpenTrusted(p string) (*os.File, error) {
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

// execLink makes dir/NAME a symlink to the descriptor the child gets as
// fd 3, NAME being the binary's own base name: the kernel names the
// process after the path it executes (redis-server, as doctor and the
// session look for it) and argv[0] keeps redis-server's mode, while the
// magic link resolves to the checked file itself, never to a name. dir
// is a directory only this process writes.
func (b *binary) execLink(dir string) (string, error) {
	link := filepath.Join(dir, b.name)
	if err := os.Symlink("/proc/self/fd/3", link); err != nil {
		return "", fmt.Errorf("redis-server binary: %w", err)
	}
	return link, nil
}

// command makes the command of argv, whose first program (a wrapper:
// ip, setpriv, numactl, taskset; or the binary's link) is an absolute
// path lookProgram resolved (or the link to the checked descriptor). No
// program of the chain is looked up on PATH: each wrapper execs the next
// by the absolute path it was given.
func command(argv []string) (*exec.Cmd, error) {
	if !filepath.IsAbs(argv[0]) {
		return nil, fmt.Errorf("%s: not resolved to an absolute path", argv[0])
	}
	return exec.Command(argv[0], argv[1:]...), nil
}

// trustedDirs are where a root redline finds the programs it runs around
// a server (ip, setpriv, numactl, taskset, prlimit), in this order, as
// sudo's secure_path does: never root's PATH, which a user may have
// reached (sudo -E, a root shell that kept a user's PATH) and which an
// exec through setpriv or ip netns exec would search again.
var trustedDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// lookProgram resolves a wrapper program. As root: the first
// trustedDirs/name that OpenTrusted accepts (root owns it and every
// directory from /, nobody else can write them, a symlink on the way was
// written by root) and that is an executable file; a name already given
// as an absolute path must pass the same rule. The path returned is safe
// to exec by name: nobody but root can change what it resolves to.
// Not root, the program runs as the caller: PATH, as a shell would.
func lookProgram(name string) (string, error) {
	if os.Geteuid() != 0 {
		return exec.LookPath(name)
	}
	cands := []string{name}
	if !filepath.IsAbs(name) {
		if strings.Contains(name, "/") {
			return "", fmt.Errorf("%s: want a program name or an absolute path", name)
		}
		cands = cands[:0]
		for _, d := range trustedDirs {
			cands = append(cands, filepath.Join(d, name))
		}
	}
	var refused []string
	for _, p := range cands {
		f, err := OpenTrusted(p)
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
	return "", fmt.Errorf("%s: not found in %s (as root, redline runs it only from root's system directories, not from PATH)", name, strings.Join(trustedDirs, ", "))
}

// wrapArgv is the command prefix of wrappers, each program resolved by
// lookProgram.
func wrapArgv(wrap [][]string) ([]string, error) {
	var argv []string
	for _, w := range wrap {
		if len(w) == 0 {
			continue
		}
		p, err := lookProgram(w[0])
		if err != nil {
			return nil, fmt.Errorf("redis-server wrapper: %w", err)
		}
		argv = append(append(argv, p), w[1:]...)
	}
	return argv, nil
}

// serverUsers are the unprivileged users a root redline runs its
// redis-servers as, the first that exists: the Redis package's own, else
// nobody. A server reachable over the network must not run as root.
var serverUsers = []string{"redis", "nobody"}

// ServerUser is the unprivileged user a root redline runs its
// redis-servers as (serverUsers): whatever such a server must write (its
// directory, a PGO build's profile directory) is handed to this user.
func ServerUser() (*user.User, error) {
	for _, name := range serverUsers {
		if u, err := user.Lookup(name); err == nil {
			return u, nil
		}
	}
	return nil, fmt.Errorf("redis-server: no unprivileged user to run it as (%s); redline does not run a server as root", strings.Join(serverUsers, ", "))
}

// dropPrivileges returns the command prefix that runs the server as an
// unprivileged user when redline is root (setpriv, keeping the parent
// death signal that a change of uid would clear), after handing the
// server's directory to that user; nothing otherwise.
func (s *Server) dropPrivileges() ([]string, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := ServerUser()
	if err != nil {
		return nil, err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(s.Dir, uid, gid); err != nil {
		return nil, fmt.Errorf("redis-server: hand its directory to %s: %w", u.Username, err)
	}
	setpriv, err := lookProgram("setpriv")
	if err != nil {
		return nil, fmt.Errorf("redis-server: drop to %s: %w", u.Username, err)
	}
	return []string{setpriv, "--reuid=" + u.Uid, "--regid=" + u.Gid, "--clear-groups", "--pdeathsig=SIGKILL", "--"}, nil
}
