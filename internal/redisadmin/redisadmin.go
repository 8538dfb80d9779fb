// Package redisadmin is redline's admin connection to a Redis server, the
// one place that dials and authenticates for INFO and CONFIG: INFO parsed
// into sections and typed lines, CONFIG GET, LATENCY LATEST, and where the
// server runs (its pid, whether it is on this host, its network
// namespace). Every dial and round trip has a deadline; errors never show
// the password.
//
// It reads only, except ConfigSet and ConfigRewrite, which internal/tune
// calls to apply redis-config Changes; doctor never calls them (a test
// enforces that).
package redisadmin

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"redline/internal/netns"
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
	// With RESP3 the handshake is HELLO 3 (carrying AUTH when Password is
	// set), as redis-cli -3 does.
	Username, Password string
	RESP3              bool
	TLS                *tls.Config
	Timeout            time.Duration // per dial and per round trip; default DefaultTimeout
	// NetNS is the network namespace to connect from (a name as in
	// /run/netns, or a path); empty for the current one.
	NetNS string
}

// ErrAuth marks a refused AUTH or HELLO (wrong password, unknown user).
var ErrAuth = errors.New("authentication failed")

// Conn is an admin connection. It is not safe for concurrent use.
type Conn struct {
	c    *resp.Client
	opts Options
	// RoundTrips counts the commands sent, for reports of a run's cost.
	RoundTrips int
}

// A Guard makes every admin connection dialled with a context carrying it
// (WithGuard), and decides whether to: a root session's allows only the
// servers it started or the client attached, and reaches a unix socket
// only as its invoking user could. Its refusals wrap ErrRefused.
type Guard func(ctx context.Context, network, addr string) (net.Conn, error)

// ErrRefused marks a connection a Guard would not make.
var ErrRefused = errors.New("refused")

type guardKey struct{}

// WithGuard returns ctx whose admin connections g makes: Dial, and so
// doctor, tune and the cluster readers below it, dial through g alone.
func WithGuard(ctx context.Context, g Guard) context.Context {
	return context.WithValue(ctx, guardKey{}, g)
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
	dial := netns.Dialer(o.NetNS)
	if g, ok := ctx.Value(guardKey{}).(Guard); ok && g != nil {
		if o.NetNS != "" {
			return nil, fmt.Errorf("Redis at %s: a guarded connection does not enter network namespaces: %w", o.Addr, ErrRefused)
		}
		dial = g
	}
	c, err := resp.Dial(ctx, resp.DialOptions{
		Network: o.Network, Addr: o.Addr, TLS: o.TLS, Timeout: o.Timeout, Dial: dial,
	})
	if errors.Is(err, ErrRefused) {
		return nil, fmt.Errorf("Redis at %s: %w", o.Addr, err)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		// the resolver's own address says nothing the user can act on
		return nil, fmt.Errorf("connect to Redis at %s: the name %s does not resolve (check the host name, or give an IP address)", o.Addr, dns.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("connect to Redis at %s: %w (is redis-server running and reachable?)", o.Addr, err)
	}
	conn := &Conn{c: c, opts: o}
	if err := conn.handshake(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return conn, nil
}

// handshake sends AUTH, or HELLO 3 with AUTH, when the options ask for it.
// The password is in args but never in an error: the command is named by
// its first word only.
func (c *Conn) handshake(ctx context.Context) error {
	o := c.opts
	var args []string
	switch {
	case o.RESP3:
		args = []string{"HELLO", "3"}
		if o.Password != "" {
			args = append(args, "AUTH", cmp.Or(o.Username, "default"), o.Password)
		}
	case o.Password != "" && o.Username != "":
		args = []string{"AUTH", o.Username, o.Password}
	case o.Password != "":
		args = []string{"AUTH", o.Password}
	default:
		return nil
	}
	c.RoundTrips++
	_, err := c.c.DoOK(ctx, args...)
	var se *resp.ServerError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se) && (o.Password != "" || strings.HasPrefix(se.Msg, "NOAUTH")):
		return fmt.Errorf("%w: %s on Redis at %s: %w (check the user name and password: %s)", ErrAuth, args[0], o.Addr, err, PasswordHint)
	default:
		return fmt.Errorf("%s on Redis at %s: %w", args[0], o.Addr, notRedis(o.Addr, err))
	}
}

// Addr returns the address this connection was dialled with.
func (c *Conn) Addr() string { return c.opts.Addr }

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
	var se *resp.ServerError
	switch {
	case err == nil:
		return v, nil
	case errors.As(err, &se) && strings.HasPrefix(se.Msg, "NOAUTH"):
		return v, fmt.Errorf("%w: %s on Redis at %s: %w (%s)", ErrAuth, commandName(args), c.opts.Addr, err, PasswordHint)
	}
	return v, fmt.Errorf("%s: %w", commandName(args), notRedis(c.opts.Addr, err))
}

// PasswordHint is how every command takes a Redis password, said with
// every authentication failure.
const PasswordHint = "give the password with --pass-file FILE or REDISCLI_AUTH (or -a PASSWORD where the command takes it)"

// notRedis says what a reply that is not RESP means: the address is not a
// Redis server (a web server answers "HTTP/1.1 400 Bad Request").
func notRedis(addr string, err error) error {
	var nr *resp.NotRESPError
	if errors.As(err, &nr) {
		return fmt.Errorf("%s is not a Redis server (it answered %q): %w", addr, nr.Start, resp.ErrProtocol)
	}
	return err
}

// commandName names a command for an error: its first two words, except
// for the commands that carry a password.
func commandName(args []string) string {
	switch strings.ToUpper(args[0]) {
	case "AUTH", "HELLO", "MIGRATE":
		return args[0]
	}
	return strings.Join(args[:min(2, len(args))], " ")
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

// ConfigSet runs CONFIG SET name value. Only internal/tune calls it. A
// refusal is a *resp.ServerError in the chain.
func (c *Conn) ConfigSet(ctx context.Context, name, value string) error {
	_, err := c.do(ctx, "CONFIG", "SET", name, value)
	return err
}

// ConfigRewrite runs CONFIG REWRITE, which writes the running settings to
// the server's config file. Only internal/tune calls it.
func (c *Conn) ConfigRewrite(ctx context.Context) error {
	_, err := c.do(ctx, "CONFIG", "REWRITE")
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
