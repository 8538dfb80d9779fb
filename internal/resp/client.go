package resp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// DefaultTimeout bounds every dial and every round trip of a Client unless
// the caller's context has an earlier deadline.
const DefaultTimeout = 10 * time.Second

// Client is a small blocking RESP client for control traffic: CONFIG GET,
// INFO, FLUSHALL. It is not used on the load generator's hot path. It is not
// safe for concurrent use.
type Client struct {
	conn    net.Conn
	buf     []byte
	out     []byte
	scan    ScanState // where the reply in buf was scanned to
	Timeout time.Duration
	// MaxReply bounds the bytes one reply may take (DefaultMaxReply when
	// zero): the server may be anyone's, and control replies are small.
	MaxReply int
}

// DefaultMaxReply is the largest reply a Client buffers by default; INFO,
// CONFIG GET *, CLIENT LIST of 10,000 clients and CLUSTER SHARDS of a large
// cluster are far below it.
const DefaultMaxReply = 16 << 20

// DialOptions says how to reach a server.
type DialOptions struct {
	Network string      // "tcp" (default) or "unix"
	Addr    string      // host:port or socket path
	TLS     *tls.Config // nil for plain TCP
	Timeout time.Duration
	// Dial, when set, makes the connection (for example from inside a
	// network namespace); TLS is layered on top.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Dial connects to a server. Errors name the address, as in
// "dial tcp 127.0.0.1:6399: connect: connection refused".
func Dial(ctx context.Context, o DialOptions) (*Client, error) {
	if o.Network == "" {
		o.Network = "tcp"
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	dial := o.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	c, err := dial(ctx, o.Network, o.Addr)
	if err != nil {
		return nil, err
	}
	if o.TLS != nil {
		tc := tls.Client(c, o.TLS)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	return &Client{conn: c, Timeout: o.Timeout}, nil
}

// Conn returns the underlying connection, for callers that take over the
// raw stream (the load generator's TLS path).
func (c *Client) Conn() net.Conn { return c.conn }

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Do sends one command and reads its reply, skipping RESP3 pushes. A server
// error reply is returned as a Value with IsError set, not as an error; err
// is for I/O and protocol failures.
func (c *Client) Do(ctx context.Context, args ...string) (Value, error) {
	c.out = AppendCommand(c.out[:0], args...)
	if err := c.setDeadline(ctx); err != nil {
		return Value{}, err
	}
	if _, err := c.conn.Write(c.out); err != nil {
		return Value{}, fmt.Errorf("write %s: %w", args[0], err)
	}
	return c.read(args[0])
}

// DoOK is Do that turns an error reply into an error.
func (c *Client) DoOK(ctx context.Context, args ...string) (Value, error) {
	v, err := c.Do(ctx, args...)
	if err != nil {
		return v, err
	}
	return v, v.Err()
}

func (c *Client) setDeadline(ctx context.Context) error {
	dl := time.Now().Add(c.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.conn.SetDeadline(dl)
}

func (c *Client) read(cmd string) (Value, error) {
	for {
		v, n, err := ParseFrom(c.buf, &c.scan)
		if err != nil {
			return Value{}, err
		}
		if n > 0 {
			c.buf = c.buf[:copy(c.buf, c.buf[n:])]
			if v.Type == '>' {
				continue
			}
			return v, nil
		}
		if err := c.fill(); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return Value{}, fmt.Errorf("no reply to %s within %s: %w", cmd, c.Timeout, err)
			}
			if errors.Is(err, io.EOF) {
				return Value{}, fmt.Errorf("server closed the connection while waiting for the reply to %s", cmd)
			}
			return Value{}, err
		}
	}
}

// fill reads more of the reply. It refuses one beyond the limit before
// buffering it: a bulk whose announced length is too large at once, any
// other when that much has arrived; the buffer never grows past the limit.
func (c *Client) fill() error {
	limit := c.MaxReply
	if limit <= 0 {
		limit = DefaultMaxReply
	}
	st := c.scan
	if _, _, need, _ := ScanFrom(c.buf, &st); need > limit {
		return fmt.Errorf("%w: a reply announced as %d bytes, larger than %d (the server is not one redline reads from)", ErrProtocol, need, limit)
	}
	if len(c.buf) >= limit {
		return fmt.Errorf("%w: a reply larger than %d bytes (the server is not one redline reads from)", ErrProtocol, limit)
	}
	if cap(c.buf)-len(c.buf) < 4096 {
		nb := make([]byte, len(c.buf), min(2*cap(c.buf)+4096, limit+4096))
		copy(nb, c.buf)
		c.buf = nb
	}
	n, err := c.conn.Read(c.buf[len(c.buf):cap(c.buf)])
	c.buf = c.buf[:len(c.buf)+n]
	if n > 0 {
		return nil
	}
	return err
}
