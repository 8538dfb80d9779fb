package serverhost

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"redline/internal/cpuset"
	"redline/internal/redisparam"
	"redline/internal/redisserver"
)

func validateRedisStart(a *RedisStartArgs) error {
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

func validateRedisTarget(r *RedisTarget) error {
	if r == nil {
		return nil
	}
	switch r.Network {
	case "", "tcp":
		if _, _, err := net.SplitHostPort(r.Addr); err != nil {
			return fmt.Errorf("redis addr %q: %w", r.Addr, err)
		}
	case "unix":
		// Whether the invoking user could connect to it is checked when
		// it is attached and at every connection (admit.go).
		if !strings.HasPrefix(r.Addr, "/") || strings.Contains(r.Addr, "/../") {
			return fmt.Errorf("redis socket %q: want an absolute path", r.Addr)
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
