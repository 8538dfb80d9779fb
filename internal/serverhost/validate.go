package serverhost

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"redline/internal/cpuset"
	"redline/internal/redisserver"
	"redline/internal/remote"
)

// AllowedRedisConfig are the redis.conf directives a client may set on a
// server the session starts: performance settings. Directives that name
// files or code (dir, dbfilename, loadmodule, include, logfile ...) are
// refused, since the session may run as root.
var AllowedRedisConfig = map[string]bool{
	"io-threads": true, "io-threads-do-reads": true, "maxmemory": true, "maxmemory-policy": true,
	"maxclients": true, "hz": true, "dynamic-hz": true, "tcp-backlog": true, "tcp-keepalive": true,
	"timeout": true, "save": true, "appendonly": true, "appendfsync": true, "activedefrag": true,
	"lazyfree-lazy-eviction": true, "lazyfree-lazy-expire": true, "lazyfree-lazy-server-del": true,
	"lazyfree-lazy-user-del": true, "lazyfree-lazy-user-flush": true, "replica-lazy-flush": true,
	"latency-monitor-threshold": true, "slowlog-log-slower-than": true, "protected-mode": true,
	"jemalloc-bg-thread": true, "server-cpulist": true, "bio-cpulist": true, "aof-rewrite-cpulist": true,
	"bgsave-cpulist": true, "databases": true,
}

var configValue = regexp.MustCompile(`^[A-Za-z0-9 ._,:"-]*$`)

func validateRedisStart(a *remote.RedisStartArgs) error {
	if a.Bind != "" && net.ParseIP(a.Bind) == nil {
		return fmt.Errorf("bind %q: want an IP address", a.Bind)
	}
	if a.Port < 0 || a.Port > 65535 {
		return fmt.Errorf("port %d: want 0-65535", a.Port)
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
		if err := validateConfigLine(line); err != nil {
			return err
		}
	}
	return nil
}

func validateConfigLine(line string) error {
	name, value, _ := strings.Cut(strings.TrimSpace(line), " ")
	if !AllowedRedisConfig[strings.ToLower(name)] {
		return fmt.Errorf("config %q: %q is not a directive a session sets (allowed: performance settings, see remote.AllowedRedisConfig)", line, name)
	}
	if !configValue.MatchString(value) {
		return fmt.Errorf("config %q: the value has characters a session does not accept", line)
	}
	return nil
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
// to an executable named redis-server*. A root session also wants it
// owned by root and writable by nobody else, directory included, so a
// user allowed only `sudo redline session` cannot run code of their own
// as root through it.
func validateBinary(p string) error {
	if p == "" {
		return nil
	}
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || !strings.HasPrefix(filepath.Base(p), "redis-server") {
		return fmt.Errorf("binary %q: want an absolute path to a redis-server* executable", p)
	}
	st, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("binary %q: %w", p, err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("binary %q: not an executable file", p)
	}
	if os.Geteuid() != 0 {
		return nil
	}
	for _, q := range []string{p, filepath.Dir(p)} {
		if err := rootOnly(q); err != nil {
			return fmt.Errorf("binary %q: %w (a root session runs only a binary root owns and nobody else can write)", p, err)
		}
	}
	return nil
}

func rootOnly(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || sys.Uid != 0 {
		return fmt.Errorf("%s is not owned by root", p)
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by group or others", p)
	}
	return nil
}
