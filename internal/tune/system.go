package tune

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"redline/internal/change"
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

	mu sync.Mutex
	// redis holds one admin connection per server address: the plan's
	// server and each cluster node its changes name.
	redis map[string]*redisadmin.Conn
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

// redisAddr is where c goes: its node, else the plan's server.
func (s *System) redisAddr(c change.Change) string {
	if c.Node != "" {
		return c.Node
	}
	return s.Redis.Addr
}

// redisConn dials the Redis server c goes to once, through redisadmin,
// and keeps the connection. A node is dialled over TCP with the same user
// and password as the plan's server (a cluster's nodes share them).
func (s *System) redisConn(ctx context.Context, c change.Change) (*redisadmin.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	addr, network := s.redisAddr(c), s.Redis.Network
	if c.Node != "" {
		network = "tcp"
	}
	if conn := s.redis[addr]; conn != nil {
		return conn, nil
	}
	if addr == "" {
		return nil, refuse("no Redis server given (pass --redis HOST:PORT, or set redis.addr in the plan)", nil)
	}
	conn, err := redisadmin.Dial(ctx, redisadmin.Options{
		Network: network, Addr: addr, Username: s.Redis.User, Password: s.Redis.Password,
		// CONFIG SET maxmemory may evict and CONFIG REWRITE writes a file:
		// give them longer than a doctor's reads.
		Timeout: resp.DefaultTimeout,
		NetNS:   s.NetNS,
	})
	if err != nil && c.Node != "" {
		return nil, err // names the node; the change's key does too
	}
	if err != nil {
		return nil, fmt.Errorf("%w (pass --redis, and the user and REDISCLI_AUTH if it needs them)", err)
	}
	if s.redis == nil {
		s.redis = map[string]*redisadmin.Conn{}
	}
	s.redis[addr] = conn
	return conn, nil
}

// Close releases the Redis connections.
func (s *System) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for addr, c := range s.redis {
		errs = append(errs, c.Close())
		delete(s.redis, addr)
	}
	return errors.Join(errs...)
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
