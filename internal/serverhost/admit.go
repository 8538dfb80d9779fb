package serverhost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"redline/internal/redisadmin"
	"redline/internal/remote"
)

// A session connects to a Redis server only when it started it
// (redis.start) or the client attached it (redis.attach): whatever else a
// request names (a doctor's or a plan's server, a cluster's nodes, a
// plan's own redis.addr) is refused at the connection itself, through the
// redisadmin.Guard its operations run under. Attaching is where the
// checks are: a TCP server must listen on an address of this host; a
// unix socket, in a session sudo started, must be one the invoking user
// could connect to, and is checked again, as that user, at every
// connection, which then goes to the socket checked.

// admitted is a session's list of the servers it may connect to.
type admitted struct {
	inv    *invoker // nil: no invoking user to check for (not a sudo root session)
	invErr error    // why the invoking user is unknown; refuses sockets

	mu      sync.Mutex
	keys    map[string]bool
	started map[string]string // a started server's id to its key
}

func newAdmitted() *admitted {
	inv, err := sudoInvoker()
	return &admitted{inv: inv, invErr: err, keys: map[string]bool{}, started: map[string]string{}}
}

// targetKey is how a server is known: "unix PATH" (cleaned) or
// "tcp HOST:PORT" with the host an IP address as net.IP prints it, or a
// name in lower case.
func targetKey(network, addr string) (string, error) {
	switch network {
	case "unix":
		if !filepath.IsAbs(addr) {
			return "", fmt.Errorf("redis socket %q: want an absolute path", addr)
		}
		return "unix " + filepath.Clean(addr), nil
	case "", "tcp", "tcp4", "tcp6":
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return "", fmt.Errorf("redis addr %q: %w", addr, err)
		}
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("redis addr %q: port %q: want 1-65535", addr, port)
		}
		if ip := net.ParseIP(host); ip != nil {
			host = ip.String()
		} else if host == "" {
			return "", fmt.Errorf("redis addr %q: no host", addr)
		}
		return "tcp " + net.JoinHostPort(strings.ToLower(host), strconv.Itoa(n)), nil
	}
	return "", fmt.Errorf("redis network %q: want tcp or unix", network)
}

// admit checks r as a server the client may name from now on (see
// above) and adds it; added says it was not there before.
func (a *admitted) admit(ctx context.Context, r RedisTarget) (added bool, err error) {
	key, err := targetKey(r.Network, r.Addr)
	if err != nil {
		return false, err
	}
	if network, addr, _ := strings.Cut(key, " "); network == "unix" {
		fd, err := a.openSocket(addr)
		if err != nil {
			return false, err
		}
		unix.Close(fd)
	} else if _, err := onThisHost(ctx, addr); err != nil {
		return false, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.keys[key] {
		return false, nil
	}
	a.keys[key] = true
	return true, nil
}

// forget drops a server admit added (an attach that then failed).
func (a *admitted) forget(r RedisTarget) {
	if key, err := targetKey(r.Network, r.Addr); err == nil {
		a.mu.Lock()
		delete(a.keys, key)
		a.mu.Unlock()
	}
}

// start adds a server the session started, at the address it listens on.
func (a *admitted) start(srv remote.RedisServer) {
	key, err := targetKey("tcp", net.JoinHostPort(srv.Host, strconv.Itoa(srv.Port)))
	if err != nil {
		return
	}
	a.mu.Lock()
	a.keys[key], a.started[srv.ID] = true, key
	a.mu.Unlock()
}

// stop drops a started server that was stopped.
func (a *admitted) stop(id string) {
	a.mu.Lock()
	if key, ok := a.started[id]; ok {
		delete(a.keys, key)
		delete(a.started, id)
	}
	a.mu.Unlock()
}

// guard is the session's redisadmin.Guard: a server on the list only,
// a unix socket reached as the invoking user would (through the
// descriptor that check opened).
func (a *admitted) guard(ctx context.Context, network, addr string) (net.Conn, error) {
	key, err := targetKey(network, addr)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", err, redisadmin.ErrRefused)
	}
	a.mu.Lock()
	ok := a.keys[key]
	a.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("not a server this session started or was asked to attach (redis.attach), the only ones it connects to: %w", redisadmin.ErrRefused)
	}
	var d net.Dialer
	if network != "unix" {
		// A name is resolved again, and must still name this host.
		ips, err := onThisHost(ctx, addr)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", err, redisadmin.ErrRefused)
		}
		_, port, _ := net.SplitHostPort(addr)
		var errs []error
		for _, ip := range ips {
			c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ip.String(), port))
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
		}
		return nil, errors.Join(errs...)
	}
	fd, err := a.openSocket(filepath.Clean(addr))
	if err != nil {
		return nil, err
	}
	if fd < 0 {
		return d.DialContext(ctx, "unix", addr)
	}
	defer unix.Close(fd)
	// The socket checked, by its descriptor: a path swapped since
	// cannot move the connection.
	return d.DialContext(ctx, "unix", "/proc/self/fd/"+strconv.Itoa(fd))
}

// openSocket checks socket as the invoking user and opens it (O_PATH);
// -1 without an invoking user to check for (the kernel checks the caller
// at connect).
func (a *admitted) openSocket(socket string) (int, error) {
	switch {
	case a.invErr != nil:
		return -1, fmt.Errorf("redis socket %s: %w: %w", socket, a.invErr, redisadmin.ErrRefused)
	case a.inv == nil:
		return -1, nil
	}
	fd, err := openSocketAs(socket, a.inv)
	if err != nil {
		return -1, fmt.Errorf("%w: %w", err, redisadmin.ErrRefused)
	}
	return fd, nil
}

// onThisHost returns the addresses of a TCP address's host (an IP, or a
// name resolved now) when every one is this host's: a loopback address or
// one of its interfaces'. Any local user can connect to such a port, so
// the session's connection is one its user could make; the session is
// not a relay to other hosts' servers.
func onThisHost(ctx context.Context, hostport string) ([]net.IP, error) {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("redis addr %s: %w", hostport, err)
		}
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	var own []net.Addr
	for _, ip := range ips {
		if ip.IsLoopback() {
			continue
		}
		if own == nil {
			if own, err = net.InterfaceAddrs(); err != nil {
				return nil, fmt.Errorf("redis addr %s: this host's addresses: %w", hostport, err)
			}
		}
		if !slices.ContainsFunc(own, func(a net.Addr) bool { n, ok := a.(*net.IPNet); return ok && n.IP.Equal(ip) }) {
			return nil, fmt.Errorf("redis addr %s: %s is not an address of this host; a session connects only to servers on its own host", hostport, ip)
		}
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("redis addr %s: no address", hostport)
	}
	return ips, nil
}
