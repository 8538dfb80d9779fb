// Package redisadmin is redline's admin connection to a Redis server: INFO
// parsed into sections and typed lines, CONFIG GET, LATENCY LATEST, and
// where the server runs (its pid, whether it is on this host, its network
// namespace). Every round trip has a deadline.
//
// It reads only, except ConfigSet, which internal/tune calls to apply a
// redis-config Change; doctor never calls it (a test enforces that).
package redisadmin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"redline/internal/resp"
)

// DefaultTimeout bounds the dial and each round trip unless Options or the
// caller's context say otherwise. Admin commands answer in microseconds;
// two seconds is long enough for a busy server and short enough that a
// hung one does not stall a doctor run.
const DefaultTimeout = 2 * time.Second

// Options says how to reach a server.
type Options struct {
	// Addr is host:port for TCP, or a socket path when Network is "unix".
	Addr    string
	Network string // "tcp" (default) or "unix"
	// Username and Password are sent with AUTH when Password is set.
	Username, Password string
	TLS                *tls.Config
	Timeout            time.Duration // per dial and per round trip; default DefaultTimeout
}

// Conn is an admin connection. It is not safe for concurrent use.
type Conn struct {
	c    *resp.Client
	nc   net.Conn
	opts Options
	// RoundTrips counts the commands sent, for reports of a run's cost.
	RoundTrips int
}

// Dial connects and authenticates. Errors name the address and say what to
// check.
func Dial(ctx context.Context, o Options) (*Conn, error) {
	if o.Network == "" {
		o.Network = "tcp"
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Addr == "" {
		return nil, errors.New("redisadmin: no server address (give host:port or a unix socket path)")
	}
	nc, err := dial(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("connect to Redis at %s: %w (is redis-server running and reachable?)", o.Addr, err)
	}
	c := resp.NewClient(nc)
	c.Timeout = o.Timeout
	conn := &Conn{c: c, nc: nc, opts: o}
	if o.Password != "" {
		if err := conn.auth(ctx); err != nil {
			c.Close()
			return nil, err
		}
	}
	return conn, nil
}

func dial(ctx context.Context, o Options) (net.Conn, error) {
	d := net.Dialer{Timeout: o.Timeout}
	if o.TLS != nil {
		td := tls.Dialer{NetDialer: &d, Config: o.TLS}
		return td.DialContext(ctx, o.Network, o.Addr)
	}
	return d.DialContext(ctx, o.Network, o.Addr)
}

func (c *Conn) auth(ctx context.Context) error {
	args := []string{"AUTH", c.opts.Password}
	if c.opts.Username != "" {
		args = []string{"AUTH", c.opts.Username, c.opts.Password}
	}
	if _, err := c.do(ctx, args...); err != nil {
		return fmt.Errorf("authenticate to Redis at %s: %w (check the user name and password)", c.opts.Addr, err)
	}
	return nil
}

// Addr returns the address this connection was dialled with.
func (c *Conn) Addr() string { return c.opts.Addr }

// Network returns "tcp" or "unix".
func (c *Conn) Network() string { return c.opts.Network }

// LocalAddr returns this end of the socket.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// RemoteAddr returns the server's end of the socket.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Do sends one command and returns its reply; a server error reply becomes
// an error (*resp.ServerError).
func (c *Conn) Do(ctx context.Context, args ...string) (resp.Value, error) {
	return c.do(ctx, args...)
}

func (c *Conn) do(ctx context.Context, args ...string) (resp.Value, error) {
	c.RoundTrips++
	v, err := c.c.DoOK(ctx, args...)
	if err != nil {
		return v, fmt.Errorf("%s: %w", strings.Join(args[:min(2, len(args))], " "), err)
	}
	return v, nil
}

// Info runs INFO with the given sections (none: "everything", falling back
// to "all" and then the default sections on servers that do not know it).
func (c *Conn) Info(ctx context.Context, sections ...string) (*Info, error) {
	tries := [][]string{sections}
	if len(sections) == 0 {
		tries = [][]string{{"everything"}, {"all"}, nil}
	}
	var lastErr error
	for _, s := range tries {
		v, err := c.do(ctx, append([]string{"INFO"}, s...)...)
		if err == nil {
			return ParseInfo(v.Str), nil
		}
		lastErr = err
		var se *resp.ServerError
		if !errors.As(err, &se) { // I/O error: do not retry on a broken connection
			break
		}
	}
	return nil, lastErr
}

// ConfigGet runs CONFIG GET pattern ("*" for everything).
func (c *Conn) ConfigGet(ctx context.Context, pattern string) (Config, error) {
	v, err := c.do(ctx, "CONFIG", "GET", pattern)
	if err != nil {
		return nil, err
	}
	return parseConfigReply(v)
}

// ConfigSet runs CONFIG SET name value. Only internal/tune calls it.
func (c *Conn) ConfigSet(ctx context.Context, name, value string) error {
	_, err := c.do(ctx, "CONFIG", "SET", name, value)
	return err
}

// LatencyLatest runs LATENCY LATEST.
func (c *Conn) LatencyLatest(ctx context.Context) ([]LatencyEvent, error) {
	v, err := c.do(ctx, "LATENCY", "LATEST")
	if err != nil {
		return nil, err
	}
	return parseLatencyLatest(v)
}
