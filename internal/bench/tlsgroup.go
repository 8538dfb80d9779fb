package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"redline/internal/netns"
	"redline/internal/resp"
)

// tlsGroup drives connections that need crypto/tls, which works on
// net.Conn and not on raw descriptors: one goroutine per connection, in
// closed loop. Each goroutine buffers its latencies and hands them to the
// group's recorder in chunks, so the lock is rare.
type tlsGroup struct {
	r     *runner
	id    int
	n     int
	gen   generator
	rec   *recorder
	conns []net.Conn
}

func newTLSGroup(r *runner, id, n int, gen generator) *tlsGroup {
	return &tlsGroup{r: r, id: id, n: n, gen: gen, rec: newRecorder(r.o.Precision, len(gen.cmds), false)}
}

func (g *tlsGroup) recorder() *recorder { return g.rec }

func (g *tlsGroup) close() {
	for _, c := range g.conns {
		c.Close()
	}
}

func (g *tlsGroup) run(ready chan<- error, start <-chan struct{}) error {
	err := g.setup()
	ready <- err
	if err != nil {
		return err
	}
	<-start
	if g.r.abort.Load() {
		return nil
	}
	stop := make(chan struct{})
	go g.unblockOnAbort(stop)
	defer close(stop)
	errs := make(chan error, len(g.conns))
	for i, c := range g.conns {
		gen := g.gen
		gen.rng = newRand(g.r.o.Seed, uint64(g.id*100000+i+1))
		go func() { errs <- g.drive(c, &gen) }()
	}
	var first error
	for range g.conns {
		if err := <-errs; err != nil && first == nil {
			first = err
			g.r.fail(err)
		}
	}
	return first
}

// unblockOnAbort wakes goroutines blocked in a read when the run aborts.
func (g *tlsGroup) unblockOnAbort(stop <-chan struct{}) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if g.r.abort.Load() {
				for _, c := range g.conns {
					c.SetDeadline(time.Now())
				}
				return
			}
		}
	}
}

func (g *tlsGroup) setup() error {
	for range g.n {
		ctx, cancel := context.WithTimeout(context.Background(), g.r.o.Timeout)
		began := g.r.now()
		c, err := resp.Dial(ctx, resp.DialOptions{Network: g.r.o.Network, Addr: g.r.o.Addr, TLS: g.r.o.TLS, Timeout: g.r.o.Timeout, Dial: netns.Dialer(g.r.o.NetNS)})
		cancel()
		if err != nil {
			g.rec.connectFailed(errnoName(err))
			return fmt.Errorf("Could not connect to Redis at %s: %s", g.r.target, capitalise(rootCause(err)))
		}
		g.rec.connected(g.r.now() - began)
		conn := c.Conn()
		g.conns = append(g.conns, conn)
		if err := g.handshake(conn); err != nil {
			return err
		}
		g.rec.isReady(g.r.now() - began)
	}
	return nil
}

func (g *tlsGroup) handshake(c net.Conn) error {
	if g.r.prefixCount == 0 {
		return nil
	}
	c.SetDeadline(time.Now().Add(g.r.o.Timeout))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write(g.r.prefix); err != nil {
		return g.r.ioError("write", err, 0)
	}
	var in []byte
	for got := 0; got < g.r.prefixCount; {
		var err error
		if in, err = fill(c, in); err != nil {
			return g.r.ioError("read", err, 0)
		}
		for {
			n, kind, need, err := resp.Scan(in)
			if err != nil {
				return err
			}
			if n == 0 {
				if err := g.r.partialReply(g.r.target, len(in), need); err != nil {
					return err
				}
				break
			}
			if kind == resp.KindError {
				return g.r.handshakeError(in[:n])
			}
			if kind != resp.KindPush {
				got++
			}
			in = in[n:]
		}
	}
	return nil
}

// drive runs one connection's closed loop.
func (g *tlsGroup) drive(c net.Conn, gen *generator) error {
	var out, in []byte
	var q queue
	lat := make([]pending, 0, 512)
	var times []int64
	flush := func() {
		g.rec.mu.Lock()
		for i, p := range lat {
			g.rec.record(p, times[i])
		}
		g.rec.mu.Unlock()
		lat, times = lat[:0], times[:0]
	}
	defer flush()
	for {
		k := g.r.claim(g.r.o.Pipeline)
		if k == 0 {
			return nil
		}
		measured := g.r.measuring.Load()
		out = out[:0]
		for range k {
			var cls uint8
			out, cls = gen.appendRequest(out)
			q.push(pending{class: cls, measured: measured})
		}
		now := g.r.now()
		for i := range k {
			p := &q.buf[(q.head+i)%len(q.buf)]
			p.sent, p.intended = now, now
		}
		c.SetDeadline(time.Now().Add(g.r.o.Timeout))
		if _, err := c.Write(out); err != nil {
			return g.r.connError("write", err, q.size)
		}
		for q.size > 0 {
			var err error
			if in, err = fill(c, in); err != nil {
				return g.r.connError("read", err, q.size)
			}
			now := g.r.now()
			used, err := g.r.scanReplies(in, func(kind resp.Kind, reply []byte) error {
				if q.size == 0 {
					return fmt.Errorf("reply with no request outstanding from %s: %q", g.r.target, clip(reply))
				}
				p := q.pop()
				if kind == resp.KindError {
					return g.r.replyError(reply, p.class)
				}
				if p.measured {
					lat, times = append(lat, p), append(times, now)
				}
				return nil
			})
			if err != nil {
				return err
			}
			in = in[:copy(in, in[used:])]
		}
		// Recorded in chunks to keep the lock rare, but at least every
		// 10 ms so progress sees them in their interval.
		if len(lat) >= 256 || (len(times) > 0 && g.r.now()-times[0] > int64(10*time.Millisecond)) {
			flush()
		}
	}
}

// connError classifies an I/O error on a net.Conn like the epoll engine does.
func (r *runner) connError(op string, err error, outstanding int) error {
	switch {
	case r.abort.Load():
		return nil
	case errors.Is(err, io.EOF):
		return r.closedError(outstanding)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return r.timeoutError(outstanding)
	}
	return r.ioError(op, err, outstanding)
}

func fill(c net.Conn, in []byte) ([]byte, error) {
	if cap(in)-len(in) < readChunk/4 {
		in = growBuf(in, len(in)+readChunk)
	}
	n, err := c.Read(in[len(in):cap(in)])
	if n > 0 {
		return in[:len(in)+n], nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return in, err
}

// scanReplies calls fn for every complete non-push reply in in and returns
// the bytes consumed.
func (r *runner) scanReplies(in []byte, fn func(resp.Kind, []byte) error) (int, error) {
	pos := 0
	for pos < len(in) {
		n, kind, need, err := resp.Scan(in[pos:])
		if err != nil {
			return 0, err
		}
		if n == 0 {
			if err := r.partialReply(r.target, len(in)-pos, need); err != nil {
				return 0, err
			}
			break
		}
		reply := in[pos : pos+n]
		pos += n
		if kind == resp.KindPush {
			continue
		}
		if err := fn(kind, reply); err != nil {
			return 0, err
		}
	}
	return pos, nil
}
