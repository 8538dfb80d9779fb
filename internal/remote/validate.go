package remote

import (
	"fmt"
	"net"
	"regexp"
	"strings"

	"redline/internal/cpuset"
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

func validateRedisStart(a *RedisStartArgs) error {
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
