package bench

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"

	"redline/internal/resp"
)

// churnLoop is --connect-rate: an event loop that opens connections on a
// fixed schedule instead of keeping them. Each connection sends the set-up
// commands and one request of the test, reads the reply and is closed by
// the client (so TIME_WAIT piles up on the client's side, as with -k 0 and
// with short-lived application connections). At most its share of -c are
// open at once; a connect due while all are open is late, and its
// request's latency counts from when it was due. A failed connect is
// data: counted by errno (EADDRNOTAVAIL when the local ports run out) and
// the schedule goes on; every connect and reply has the --timeout
// deadline.
type churnLoop struct {
	id       int
	r        *runner
	epfd     int
	timerfd  int
	slots    []*conn
	byFD     []*conn
	gen      generator
	rec      *recorder
	sockaddr unix.Sockaddr
	events   [256]unix.EpollEvent

	pacer   pacer
	seq     int64
	end     int64
	issuing bool
	open    int
	free    []*conn // slots with no connection
	w       *worker // the placement helper (namespace, CPUs)
}

func newChurnLoop(r *runner, id, slots int, gen generator) (*churnLoop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	l := &churnLoop{id: id, r: r, epfd: epfd, timerfd: -1, gen: gen, sockaddr: r.sockaddrCopy(),
		rec: newRecorder(r.o.Precision, len(gen.cmds), true)}
	for range slots {
		l.slots = append(l.slots, &conn{fd: -1, state: stDone})
	}
	l.free = append(l.free, l.slots...)
	l.w = &worker{r: r}
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		l.close()
		return nil, fmt.Errorf("timerfd_create: %w", err)
	}
	l.timerfd = fd
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		l.close()
		return nil, fmt.Errorf("epoll_ctl: %w", err)
	}
	return l, nil
}

func (l *churnLoop) recorder() *recorder { return l.rec }

func (l *churnLoop) close() {
	for _, c := range l.slots {
		l.drop(c)
	}
	if l.timerfd >= 0 {
		unix.Close(l.timerfd)
		l.timerfd = -1
	}
	unix.Close(l.epfd)
}

// run has nothing to set up: it is ready at once, and connects once the
// measurement (or warm-up) starts.
func (l *churnLoop) run(ready chan<- error, start <-chan struct{}) error {
	runtime.LockOSThread()
	restore, err := l.w.placeThread()
	defer func() {
		if restore() == nil {
			runtime.UnlockOSThread()
		}
	}()
	ready <- err
	if err != nil {
		return err
	}
	<-start
	if l.r.abort.Load() {
		return nil
	}
	now := l.r.now()
	l.pacer = newFixedRate(l.r.o.ConnectRate, len(l.r.loops), l.id, now)
	if l.r.o.Duration > 0 {
		l.end = now + int64(l.r.o.Warmup+l.r.o.Duration)
		l.rec.end = l.end
	}
	l.issuing = true
	return l.loop()
}

func (l *churnLoop) loop() error {
	for !l.r.abort.Load() && (l.issuing || l.open > 0) {
		ms, err := l.pace()
		if err != nil {
			return err
		}
		if err := l.poll(ms); err != nil {
			return err
		}
		if err := l.checkTimeouts(); err != nil {
			return err
		}
	}
	return nil
}

// pace opens every connection whose time has come and a free slot allows,
// and returns how long poll may wait.
func (l *churnLoop) pace() (int, error) {
	if l.r.stopIssue.Load() {
		l.issuing = false
	}
	now := l.r.now()
	for l.issuing {
		due := l.pacer.due(l.seq)
		if due > now {
			break
		}
		if len(l.free) == 0 {
			return 100, nil // every slot is open: the connect is late, and a reply frees one
		}
		if !l.r.claimDue(due, l.end) {
			l.issuing = false
			break
		}
		l.seq++
		c := l.free[len(l.free)-1]
		l.free = l.free[:len(l.free)-1]
		if err := l.dial(c, due); err != nil {
			return 0, err
		}
	}
	if !l.issuing {
		return 100, nil
	}
	ms, _, err := armTimerFD(l.timerfd, l.pacer.due(l.seq)-l.r.now())
	return ms, err
}

// dial starts one connection; a connect() that fails at once (no local
// port left, refused) is counted and the slot stays free.
func (l *churnLoop) dial(c *conn, due int64) error {
	fd, err := unix.Socket(l.r.domain, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w (raise the open-files limit: ulimit -n)", err)
	}
	if l.r.domain != unix.AF_UNIX {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	c.started = l.r.now()
	if err := unix.Connect(fd, l.sockaddr); err != nil && !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		l.rec.connectFailed(errnoName(err))
		l.free = append(l.free, c)
		return nil
	}
	for fd >= len(l.byFD) {
		l.byFD = append(l.byFD, make([]*conn, len(l.byFD)+64)...)
	}
	c.fd, c.state, c.lastIO = fd, stConnecting, c.started
	c.out, c.outOff, c.in, c.prefix, c.wantOut = c.out[:0], 0, c.in[:0], 0, false
	l.byFD[fd] = c
	c.q.push(pending{intended: due, measured: l.r.measuring.Load()})
	l.open++
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT, Fd: int32(fd)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		l.drop(c)
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

// drop closes a slot's connection and frees the slot.
func (l *churnLoop) drop(c *conn) {
	if c.fd >= 0 {
		unix.Close(c.fd)
		l.byFD[c.fd] = nil
		c.fd = -1
		l.open--
		l.free = append(l.free, c)
	}
	for c.q.size > 0 {
		c.q.pop()
	}
	c.state = stDone
}

func (l *churnLoop) poll(ms int) error {
	n, err := rawEpollWait(l.epfd, l.events[:], ms)
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return nil
		}
		return fmt.Errorf("epoll_wait: %w", err)
	}
	for i := range n {
		fd := int(l.events[i].Fd)
		if fd == l.timerfd {
			var b [8]byte
			unix.Read(fd, b[:])
			continue
		}
		if fd >= len(l.byFD) || l.byFD[fd] == nil {
			continue
		}
		c := l.byFD[fd]
		if err := handleEvents(l, c, l.events[i].Events); err != nil {
			return err
		}
	}
	return nil
}

// connected sends the set-up commands and the request in one write.
func (l *churnLoop) connected(c *conn) error {
	if err := connectResult(c.fd); err != nil {
		l.rec.connectFailed(errnoName(err))
		l.drop(c)
		return nil
	}
	now := l.r.now()
	l.rec.connected(now - c.started)
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	c.state, c.prefix, c.lastIO = stHandshake, l.r.prefixCount, now
	if c.prefix == 0 {
		l.rec.isReady(now - c.started)
		c.state = stActive
	}
	c.out = append(c.out[:0], l.r.prefix...)
	p := &c.q.buf[c.q.head] // pushed by dial
	c.out, p.class = l.gen.appendRequest(c.out)
	p.sent = now
	return l.flush(c)
}

// flush writes what is left of the connection's request; a full socket
// buffer (a large value) waits for EPOLLOUT.
func (l *churnLoop) flush(c *conn) error {
	blocked, err := writeOut(c)
	switch {
	case blocked:
		return l.watchOut(c, true)
	case err != nil:
		return l.r.ioError("write", err, c.q.size)
	}
	return l.watchOut(c, false)
}

func (l *churnLoop) watchOut(c *conn, on bool) error { return watchOut(l.epfd, c, on) }

// readable reads the set-up replies and the request's reply, then closes.
func (l *churnLoop) readable(c *conn) error {
	if cap(c.in)-len(c.in) < 512 {
		c.in = growBuf(c.in, len(c.in)+readChunk)
	}
	n, err := rawRead(c.fd, c.in[len(c.in):cap(c.in)])
	if n <= 0 {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			return nil
		}
		if err == nil {
			return l.r.closedError(c.q.size)
		}
		return l.r.ioError("read", err, c.q.size)
	}
	now := l.r.now()
	c.in = c.in[:len(c.in)+n]
	pos := 0
	for pos < len(c.in) && c.q.size > 0 {
		size, kind, need, err := resp.Scan(c.in[pos:])
		if err != nil {
			return fmt.Errorf("reading replies from %s: %w", l.r.target, err)
		}
		if size == 0 {
			if err := l.r.partialReply(l.r.target, len(c.in)-pos, need); err != nil {
				return err
			}
			break
		}
		reply := c.in[pos : pos+size]
		pos += size
		if err := l.reply(c, kind, reply, now); err != nil {
			return err
		}
	}
	if c.q.size == 0 {
		l.drop(c)
		return nil
	}
	rest := copy(c.in, c.in[pos:])
	c.in = c.in[:rest]
	return nil
}

func (l *churnLoop) reply(c *conn, kind resp.Kind, reply []byte, now int64) error {
	if kind == resp.KindPush {
		return nil
	}
	c.lastIO = now // --timeout is per reply: bytes of one do not extend it
	if c.state == stHandshake {
		if kind == resp.KindError {
			return l.r.handshakeError(reply)
		}
		if c.prefix--; c.prefix == 0 {
			l.rec.isReady(now - c.started)
			c.state = stActive
		}
		return nil
	}
	p := c.q.pop()
	if kind == resp.KindError {
		return l.r.replyError(reply, p.class)
	}
	if p.measured {
		l.rec.mu.Lock()
		l.rec.record(p, now)
		l.rec.mu.Unlock()
	}
	return nil
}

// checkTimeouts counts a connect not answered within --timeout as a
// "timeout" failure; a reply not answered within it ends the run.
func (l *churnLoop) checkTimeouts() error {
	now := l.r.now()
	for _, c := range l.slots {
		switch {
		case c.state == stConnecting && now-c.started > int64(l.r.o.Timeout):
			l.rec.connectFailed("timeout")
			l.drop(c)
		case (c.state == stHandshake || c.state == stActive) && now-c.lastIO > int64(l.r.o.Timeout):
			return l.r.timeoutError(c.q.size)
		}
	}
	return nil
}

// addChurnLoop adds a --connect-rate loop; on failure it closes the loops
// made so far, as makeWorkers does.
func (r *runner) addChurnLoop(id, slots int, g generator) error {
	l, err := newChurnLoop(r, id, slots, g)
	if err != nil {
		for _, o := range r.loops {
			o.close()
		}
		return err
	}
	r.loops = append(r.loops, l)
	return nil
}
