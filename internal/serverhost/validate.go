package serverhost

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"redline/internal/cpuset"
	"redline/internal/redisparam"
	"redline/internal/redisserver"
	"redline/internal/remote"
)

func validateRedisStart(a *remote.RedisStartArgs) error {
	if err := validateBind(a.Bind); err != nil {
		return err
	}
	if a.Port != 0 && (a.Port < 1024 || a.Port > 65535) {
		return fmt.Errorf("port %d: want 1024-65535, or 0 for a free one (a session does not take a system service's port)", a.Port)
	}
	if a.CPUs != "" {
		if _, err := cpuset.ParseList(a.CPUs); err != nil {
			return fmt.Errorf("cpus %q: %w", a.CPUs, err)
		}
	}
	if strings.ContainsAny(a.Password, "\r\n\x00") {
		return fmt.Errorf("password: control characters are not allowed")
	}
	if a.NUMANode != nil && (*a.NUMANode < 0 || *a.NUMANode > 1023) {
		return fmt.Errorf("numa_node %d: want 0-1023", *a.NUMANode)
	}
	if a.Allocator != "" && !slices.Contains(redisserver.AllocatorNames(), a.Allocator) {
		return fmt.Errorf("allocator %q: want one of %s", a.Allocator, strings.Join(redisserver.AllocatorNames(), ", "))
	}
	if err := validateBinary(a.Binary); err != nil {
		return err
	}
	for _, line := range a.Config {
		if err := redisparam.CheckLine(line); err != nil {
			return err
		}
	}
	return nil
}

// validateBind accepts the addresses a session's server may listen on: a
// loopback address, or the server host's address of the SSH connection
// (what the lab's load reaches), never 0.0.0.0 or another network's.
func validateBind(bind string) error {
	if bind == "" {
		return nil
	}
	ip := net.ParseIP(bind)
	if ip == nil {
		return fmt.Errorf("bind %q: want an IP address", bind)
	}
	if ip.IsLoopback() {
		return nil
	}
	if f := strings.Fields(os.Getenv("SSH_CONNECTION")); len(f) == 4 && net.ParseIP(f[2]).Equal(ip) {
		return nil
	}
	return fmt.Errorf("bind %s: a session's server listens on loopback or on this host's address of the SSH connection only", bind)
}

func validateRedisTarget(r *remote.RedisTarget) error {
	if r == nil {
		return nil
	}
	switch r.Network {
	case "", "tcp":
		if _, _, err := net.SplitHostPort(r.Addr); err != nil {
			return fmt.Errorf("redis addr %q: %w", r.Addr, err)
		}
	case "unix":
		if !strings.HasPrefix(r.Addr, "/") || strings.Contains(r.Addr, "/../") {
			return fmt.Errorf("redis socket %q: want an absolute path", r.Addr)
		}
		if err := invokerCanConnect(r.Addr); err != nil {
			return err
		}
	default:
		return fmt.Errorf("redis network %q: want tcp or unix", r.Network)
	}
	if strings.ContainsAny(r.User+r.Password, "\r\n\x00") {
		return fmt.Errorf("redis user or password: control characters are not allowed")
	}
	return nil
}

var sessionID = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

func validateSessionID(id string) error {
	if id != "" && !sessionID.MatchString(id) {
		return fmt.Errorf("session %q: not a tune session id", id)
	}
	return nil
}

// checkRedisProcess checks that pid is a redis-server process of this
// host (its command name), so a sample reads a server's threads, not
// whichever process a pid from another namespace names here.
func checkRedisProcess(pid int) error {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return fmt.Errorf("process %d is not on this host (a server in a container?): %w", pid, err)
	}
	if comm := strings.TrimSpace(string(b)); !strings.HasPrefix(comm, "redis-server") {
		return fmt.Errorf("process %d is %q, not a redis-server (a server in another pid namespace?)", pid, comm)
	}
	return nil
}

// validateBinary accepts another redis-server to start: an absolute path
// to an executable named redis-server*, which a root session runs only
// under redisserver's rule (root owns it and every directory from /, and
// nobody else can write them); Start checks again the descriptor it runs.
func validateBinary(p string) error {
	if p == "" {
		return nil
	}
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || !strings.HasPrefix(filepath.Base(p), "redis-server") {
		return fmt.Errorf("binary %q: want an absolute path to a redis-server* executable", p)
	}
	return redisserver.CheckBinary(p, false)
}

// invokerCanConnect refuses a unix socket the user who ran sudo could not
// connect to: a root session must not be the way a sudo user reaches a
// server behind a root-only socket (and reads its settings). A TCP
// address is open to every local user alike. Without SUDO_UID (a root
// login, or not root) the session's user is the caller.
func invokerCanConnect(socket string) error {
	uidStr := os.Getenv("SUDO_UID")
	if uidStr == "" || os.Geteuid() != 0 {
		return nil
	}
	u, err := user.LookupId(uidStr)
	if err != nil {
		return fmt.Errorf("redis socket %s: the invoking user %s: %w", socket, uidStr, err)
	}
	gids, _ := u.GroupIds()
	uid, _ := strconv.Atoi(uidStr)
	real, err := filepath.EvalSymlinks(socket)
	if err != nil {
		return fmt.Errorf("redis socket %s: %w", socket, err)
	}
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		if !permits(p, uid, gids, 0o1) {
			return fmt.Errorf("redis socket %s: %s cannot reach it (directory %s); the session connects only where you could", socket, u.Username, p)
		}
		if p == "/" {
			break
		}
	}
	if !permits(real, uid, gids, 0o2) {
		return fmt.Errorf("redis socket %s: %s cannot connect to it (its mode and owner); the session connects only where you could", socket, u.Username)
	}
	return nil
}

// permits reports whether uid (with groups gids) has the permission bit
// want (1 search/execute, 2 write) on p by its mode.
func permits(p string, uid int, gids []string, want os.FileMode) bool {
	st, err := os.Stat(p)
	if err != nil {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	mode := st.Mode().Perm()
	switch {
	case int(sys.Uid) == uid:
		return mode&(want<<6) != 0
	case slices.Contains(gids, strconv.Itoa(int(sys.Gid))):
		return mode&(want<<3) != 0
	}
	return mode&want != 0
}
