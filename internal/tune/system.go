package tune

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"redline/internal/redisadmin"
	"redline/internal/resp"
	"redline/internal/tune/simfs"
)

// System is the machine tune changes: where its kernel files are and how
// to reach its processes, services, NICs and Redis server. Controllers left
// nil make the changes of their kind report-only, with the reason.
type System struct {
	// Root is the directory holding proc/ and sys/: "/" on the live host.
	Root string
	FS   FS
	// Live is true on the live host. Only then are thread affinities,
	// services and NIC channels reachable, and only then does tune insist
	// on root.
	Live bool
	// NetNS is the network namespace the changes are made in (an `ip
	// netns` name, a path, or netns.PidPath): net.* sysctls are read and
	// written, and Redis is dialled, from inside it. Empty: the current
	// one. The journal records its identity with every change.
	NetNS string
	// Redis says how to reach the server that redis-config changes go to.
	Redis    RedisOptions
	Affinity AffinityController
	Services ServiceController
	Channels ChannelController

	// euid is the effective user, os.Geteuid() unless a test sets it.
	euid int
	// wantNS, set for a journaled session, is the namespace NetNS must
	// still be: rollback verifies it before every read and write.
	wantNS *NetNSRef

	mu    sync.Mutex
	redis *redisadmin.Conn
}

// RedisOptions says how to reach a Redis server. The password is never
// written to a plan or the journal; rollback needs it passed again.
type RedisOptions struct {
	Network  string `json:"network,omitempty" yaml:"network,omitempty"` // "tcp" (default) or "unix"
	Addr     string `json:"addr,omitempty" yaml:"addr,omitempty"`
	User     string `json:"user,omitempty" yaml:"user,omitempty"`
	Password string `json:"-" yaml:"-"`
}

// LiveSystem is the live host: root "/", sched_setaffinity for threads,
// systemctl for services when the host runs systemd, ethtool for channels.
func LiveSystem() *System {
	return &System{
		Root: "/", FS: OSFS{Root: "/"}, Live: true,
		Affinity: SchedAffinity{}, Services: DetectServices(), Channels: Ethtool{},
		euid: os.Geteuid(),
	}
}

// RehearsalSystem is a copy of a host's /proc and /sys tree below root,
// written with the kernel's formatting rules (see simfs). Thread
// affinities, services and NIC channels are report-only there.
func RehearsalSystem(root string) *System {
	// The journal records the root; rollback may run from another directory.
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return &System{Root: root, FS: simfs.New(root), euid: os.Geteuid()}
}

// requireRoot refuses host writes on the live host without root.
func (s *System) requireRoot() error {
	if s.Live && s.euid != 0 {
		return refuse("not root (run as root, or use --dry-run to see the plan)", nil)
	}
	return nil
}

// redisConn dials the Redis server once, through redisadmin, and keeps
// the connection.
func (s *System) redisConn(ctx context.Context) (*redisadmin.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.redis != nil {
		return s.redis, nil
	}
	if s.Redis.Addr == "" {
		return nil, refuse("no Redis server given (pass --redis HOST:PORT, or set redis.addr in the plan)", nil)
	}
	c, err := redisadmin.Dial(ctx, redisadmin.Options{
		Network: s.Redis.Network, Addr: s.Redis.Addr, Username: s.Redis.User, Password: s.Redis.Password,
		// CONFIG SET maxmemory may evict and CONFIG REWRITE writes a file:
		// give them longer than a doctor's reads.
		Timeout: resp.DefaultTimeout,
		NetNS:   s.NetNS,
	})
	if err != nil {
		return nil, fmt.Errorf("%w (pass --redis, and the user and REDISCLI_AUTH if it needs them)", err)
	}
	s.redis = c
	return c, nil
}

// Close releases the Redis connection.
func (s *System) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.redis == nil {
		return nil
	}
	err := s.redis.Close()
	s.redis = nil
	return err
}

// bootID identifies the current boot, so rollback knows which journaled
// values a reboot has already undone. Empty when unknown.
func (s *System) bootID() string {
	b, err := s.FS.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
