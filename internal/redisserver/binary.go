package redisserver

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"redline/internal/trusted"
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
		f, err = trusted.Open(p)
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

// lookProgram resolves a wrapper program (trusted.Program).
func lookProgram(name string) (string, error) { return trusted.Program(name) }

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
	// A Sentinel rewrites its config file (it refuses to start otherwise).
	if err := os.Chown(s.ConfPath, uid, gid); err != nil {
		return nil, fmt.Errorf("redis-server: hand its config file to %s: %w", u.Username, err)
	}
	setpriv, err := lookProgram("setpriv")
	if err != nil {
		return nil, fmt.Errorf("redis-server: drop to %s: %w", u.Username, err)
	}
	return []string{setpriv, "--reuid=" + u.Uid, "--regid=" + u.Gid, "--clear-groups", "--pdeathsig=SIGKILL", "--"}, nil
}
