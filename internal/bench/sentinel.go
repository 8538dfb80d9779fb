package bench

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"redline/internal/redisadmin"
)

// Sentinel (Options.Sentinel, Options.MasterName): the primary is the one
// Sentinel names (SENTINEL GET-MASTER-ADDR-BY-NAME), asked at the start
// and again after every failure, so a connection that fails (the primary
// died, or was demoted and answers -READONLY) is set up again with the
// primary Sentinel names then: the load follows a failover.

// sentinelAsk is the shortest time between two questions to Sentinel:
// every connection's failure asks, one question answers them all.
const sentinelAsk = 20 * time.Millisecond

// sentinelPoll is how often Sentinel is asked with no failure: a
// failover that fails no request (the old primary still answers) is
// followed within it.
const sentinelPoll = 100 * time.Millisecond

// sentinelRun is a run's view of Sentinel, shared by its loops.
type sentinelRun struct {
	o        *Options
	cur      atomic.Pointer[primaryAddr]
	ask      chan struct{}
	switches atomic.Int64
}

// primaryAddr is where the primary is; version changes with it.
type primaryAddr struct {
	addr    string
	domain  int
	sa      unix.Sockaddr
	version uint64
}

func (s *sentinelRun) current() *primaryAddr { return s.cur.Load() }

// prepareSentinel asks Sentinel for the primary and makes it the run's
// target.
func (r *runner) prepareSentinel(ctx context.Context) error {
	s := &sentinelRun{o: r.o, ask: make(chan struct{}, 1)}
	p, err := s.query(ctx)
	if err != nil {
		return err
	}
	s.cur.Store(p)
	r.sentinel = s
	r.o.Addr = p.addr
	return nil
}

// query asks Sentinel for the primary's address.
func (s *sentinelRun) query(ctx context.Context) (*primaryAddr, error) {
	o := s.o
	c, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: o.Sentinel, Timeout: o.Timeout, NetNS: o.NetNS})
	if err != nil {
		return nil, fmt.Errorf("--sentinel %s: %w", o.Sentinel, err)
	}
	defer c.Close()
	v, err := c.Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", o.MasterName)
	if err == nil {
		err = v.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("--sentinel %s: SENTINEL GET-MASTER-ADDR-BY-NAME %s: %w", o.Sentinel, o.MasterName, err)
	}
	if v.Null || len(v.Elems) != 2 {
		return nil, fmt.Errorf("--sentinel %s: it monitors no primary named %q (SENTINEL MASTERS lists those it does; --master-name)", o.Sentinel, o.MasterName)
	}
	addr := net.JoinHostPort(v.Elems[0].Str, v.Elems[1].Str)
	d, sa, err := resolveTCP(addr)
	if err != nil {
		return nil, fmt.Errorf("--sentinel %s: primary %s: %w", o.Sentinel, addr, err)
	}
	return &primaryAddr{addr: addr, domain: d, sa: sa}, nil
}

// askAgain asks for the primary again (a connection failed).
func (s *sentinelRun) askAgain() {
	select {
	case s.ask <- struct{}{}:
	default: // a question is already pending
	}
}

// primaryMoved reports whether Sentinel named another primary since c
// was dialled.
func (w *worker) primaryMoved(c *conn) bool {
	s := w.r.sentinel
	return s != nil && s.current().version+1 != c.primaryVer
}

// start asks Sentinel every sentinelPoll and whenever a loop asked, at
// most every sentinelAsk,
// until the returned stop is called; an answer that names another primary
// is the new target of every reconnect.
func (s *sentinelRun) start() (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-s.ask:
			case <-time.After(sentinelPoll):
			}
			ctx, cancel := context.WithTimeout(context.Background(), s.o.Timeout)
			p, err := s.query(ctx)
			cancel()
			if cur := s.current(); err == nil && p.addr != cur.addr {
				p.version = cur.version + 1
				s.cur.Store(p)
				s.switches.Add(1)
			}
			select {
			case <-quit:
				return
			case <-time.After(sentinelAsk):
			}
		}
	}()
	return func() { close(quit); <-done }
}
