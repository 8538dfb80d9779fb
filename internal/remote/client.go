package remote

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Client speaks the session protocol to one session.
type Client struct {
	w      io.Writer
	wmu    sync.Mutex
	mu     sync.Mutex
	nextID uint64
	wait   map[uint64]chan Response
	done   chan struct{} // closed when the session's output ended
	err    error         // why it ended

	// Hello is the session's answer to hello.
	Hello HelloResult

	// DeadAfter, when set before Handshake, ends the client (and kills
	// its transport) once nothing has come from the session for this
	// long: a link that died without closing, such as a pulled cable,
	// which ssh itself notices only after minutes. Only for callers whose
	// operations are short (the lab); the heartbeats' replies keep an idle
	// link alive.
	DeadAfter time.Duration
	lastRecv  atomic.Int64 // unix ns of the last line from the session

	closeFn  func() error
	stopBeat chan struct{}
	// kill ends the transport abruptly (SIGKILL to ssh), as a dying lab
	// does; tests use it.
	kill func()
}

// ErrClosed is returned by calls on a session whose link has ended.
var ErrClosed = errors.New("remote session ended")

// NewClient starts a client on a session's input (w) and output (r) and
// reads replies until r ends. closeFn, when set, is called by Close.
func NewClient(r io.Reader, w io.Writer, closeFn func() error) *Client {
	c := &Client{w: w, wait: map[uint64]chan Response{}, done: make(chan struct{}), closeFn: closeFn, stopBeat: make(chan struct{})}
	c.lastRecv.Store(time.Now().UnixNano())
	go c.readLoop(r)
	return c
}

func (c *Client) readLoop(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxLine)
	for sc.Scan() {
		c.lastRecv.Store(time.Now().UnixNano())
		var resp Response
		if err := json.Unmarshal(sc.Bytes(), &resp); err != nil {
			c.finish(fmt.Errorf("bad reply from the session: %w", err))
			return
		}
		c.mu.Lock()
		ch := c.wait[resp.ID]
		delete(c.wait, resp.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- resp
		}
	}
	err := sc.Err()
	if err == nil {
		err = ErrClosed
	}
	c.finish(err)
}

func (c *Client) finish(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
	default:
		c.err = err
		close(c.done)
	}
}

// Done is closed when the session's output has ended.
func (c *Client) Done() <-chan struct{} { return c.done }

// Call sends op with args and decodes the reply into result (unless nil).
// It returns when the reply arrives, ctx ends, or the session goes away.
func (c *Client) Call(ctx context.Context, op string, args, result any) error {
	ch, id, err := c.send(op, args, true)
	if err != nil {
		return err
	}
	return c.await(ctx, op, ch, id, result)
}

// await waits for the reply to request id, sent on ch, and decodes it
// into result (unless nil).
// Pending is a request sent whose reply is still to be read.
type Pending struct {
	c  *Client
	op string
	ch chan Response
	id uint64
}

// Send sends a request and returns at once: what comes on the link after
// it (another Send, a Notify) reaches the session after it.
func (c *Client) Send(op string, args any) (*Pending, error) {
	ch, id, err := c.send(op, args, true)
	if err != nil {
		return nil, err
	}
	return &Pending{c: c, op: op, ch: ch, id: id}, nil
}

// Wait waits for the reply and decodes it into result (nil: dropped).
func (p *Pending) Wait(ctx context.Context, result any) error {
	return p.c.await(ctx, p.op, p.ch, p.id, result)
}

// Notify sends a request whose reply nobody reads.
func (c *Client) Notify(op string, args any) error {
	_, _, err := c.send(op, args, false)
	return err
}

func (c *Client) await(ctx context.Context, op string, ch chan Response, id uint64, result any) error {
	var resp Response
	select {
	case resp = <-ch:
	case <-ctx.Done():
		c.forget(id)
		return fmt.Errorf("remote %s: %w", op, ctx.Err())
	case <-c.done:
		// The reader delivers a reply before it ends: a reply and the end
		// of the link can both be ready (bye's answer, then EOF), and the
		// reply wins.
		select {
		case resp = <-ch:
		default:
			return fmt.Errorf("remote %s: %w", op, c.err)
		}
	}
	if resp.Error != "" {
		return fmt.Errorf("remote %s: %s", op, resp.Error)
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Result, result); err != nil {
		return fmt.Errorf("remote %s: decode reply: %w", op, err)
	}
	return nil
}

func (c *Client) forget(id uint64) {
	c.mu.Lock()
	delete(c.wait, id)
	c.mu.Unlock()
}

// send writes one request; with want, its reply is awaited on the channel.
func (c *Client) send(op string, args any, want bool) (chan Response, uint64, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, 0, fmt.Errorf("remote %s: %w", op, err)
	}
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	var ch chan Response
	if want {
		ch = make(chan Response, 1)
		c.wait[id] = ch
	}
	c.mu.Unlock()
	b, _ := json.Marshal(Request{ID: id, Op: op, Args: raw})
	c.wmu.Lock()
	_, err = c.w.Write(append(b, '\n'))
	c.wmu.Unlock()
	if err != nil {
		c.forget(id)
		return nil, 0, fmt.Errorf("remote %s: %w", op, err)
	}
	return ch, id, nil
}

// Handshake says hello and starts heartbeats every interval (a third of the
// timeout when zero). A session of another version refuses, and a client
// refuses a session of another version: the version is the protocol.
func (c *Client) Handshake(ctx context.Context, version string, timeout, interval time.Duration) error {
	return c.HandshakeFor(ctx, version, timeout, interval, "")
}

// HandshakeFor is Handshake by a client that waits for the cleanup of its
// earlier session cleanup (HelloArgs.Cleanup).
func (c *Client) HandshakeFor(ctx context.Context, version string, timeout, interval time.Duration, cleanup string) error {
	hello := HelloArgs{Protocol: legacyProtocol, MinProtocol: legacyProtocol, Version: version, HeartbeatTimeout: timeout, Cleanup: cleanup}
	if err := c.Call(ctx, OpHello, hello, &c.Hello); err != nil {
		return err
	}
	if err := versionMismatch(c.Hello.Version, version); err != nil {
		return err
	}
	if interval <= 0 {
		interval = c.Hello.HeartbeatTimeout / 3
	}
	go c.beat(interval)
	return nil
}

// beat sends heartbeats without waiting for their replies: a long
// operation delays the replies, not the session's timer.
func (c *Client) beat(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if c.silent() {
				return
			}
			if _, _, err := c.send(OpHeartbeat, struct{}{}, false); err != nil {
				return
			}
		case <-c.stopBeat:
			return
		case <-c.done:
			return
		}
	}
}

// silent ends the client when the session has said nothing for
// DeadAfter, and reports whether it did.
func (c *Client) silent() bool {
	quiet := time.Since(time.Unix(0, c.lastRecv.Load()))
	if c.DeadAfter <= 0 || quiet < c.DeadAfter {
		return false
	}
	c.finish(fmt.Errorf("%w: nothing from it for %s (the link is down?)", ErrClosed, quiet.Round(time.Second)))
	if c.kill != nil {
		c.kill()
	}
	return true
}

// Bye ends the session: it stops its bench workers and steers, rolls
// back its scoped applies and stops its servers before it answers. What
// could not be undone is the error. Close follows.
func (c *Client) Bye(ctx context.Context) error {
	_, err := c.ByeCleanup(ctx)
	return err
}

// ByeCleanup is Bye returning what the session's cleanup did.
func (c *Client) ByeCleanup(ctx context.Context) (*Cleanup, error) {
	var cl Cleanup
	if err := c.Call(ctx, OpBye, ByeArgs{}, &cl); err != nil {
		return nil, err
	}
	if len(cl.Errors) > 0 {
		return &cl, fmt.Errorf("the session on %s could not undo everything: %s", c.Hello.Hostname, strings.Join(cl.Errors, "; "))
	}
	return &cl, nil
}

// Close stops the heartbeats and the transport. Without a Bye before it,
// the session's dead man's switch does the cleanup.
func (c *Client) Close() error {
	select {
	case <-c.stopBeat:
	default:
		close(c.stopBeat)
	}
	if c.closeFn != nil {
		return c.closeFn()
	}
	return nil
}

// DeadAfter is how long a client whose operations are short (the lab)
// waits for a word from the session before it takes the link for dead
// (Client.DeadAfter): the session's heartbeat timeout (the default when
// zero) and a margin for its longest such operation (starting a server,
// a doctor).
func DeadAfter(heartbeat time.Duration) time.Duration {
	return cmp.Or(heartbeat, DefaultHeartbeatTimeout) + 30*time.Second
}
