package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"redline/internal/netns"
	"redline/internal/resp"
)

// worker is one event loop: a locked OS thread that drives its share of the
// connections with raw non-blocking sockets and epoll. It reads each ready
// socket once (level-triggered), parses every complete reply, records its
// latency and writes the next batch in the same pass, so a request costs one
// write and one read and no epoll_ctl: redis-benchmark's ae loop re-arms the
// write event with two epoll_ctl calls per request.
type worker struct {
	id      int
	r       *runner
	epfd    int
	timerfd int
	conns   []*conn
	byFD    []*conn
	gen     generator
	rec     *recorder
	events  [256]unix.EpollEvent
	live    int // connections not done
	pending int // requests outstanding on all connections

	// rate mode
	pacer    pacer
	seq      int64 // requests this loop has issued, the pacer's n
	issuing  bool
	rr       int
	timerSet bool
	end      int64 // when --duration ends for this loop's schedule; 0: none
	endSeen  bool  // the end of --duration has been accounted
	drained  bool  // the drain limit after it has passed

	lastSweep int64
	sockaddr  unix.Sockaddr // this worker's own copy of the target
	// --reconnect: connections down, and when the first is to be
	// dialled again; --sentinel: the primary's version sockaddr is of.
	down       int
	nextRedial int64
	domain     int
	primaryVer uint64
	cl         *clusterWorker // nil unless --cluster
}

func newWorker(r *runner, id, nconns int, gen generator) (*worker, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	w := &worker{id: id, r: r, epfd: epfd, timerfd: -1, gen: gen, rec: newRecorder(r.o.Precision, len(gen.cmds), r.o.Rate > 0),
		sockaddr: r.sockaddrCopy()}
	for range nconns {
		w.conns = append(w.conns, &conn{fd: -1})
	}
	w.live = nconns
	w.domain = r.domain
	if r.o.Reconnect {
		w.rec.fo = &failRec{from: r.measureStart.Load}
	}
	if r.o.Rate > 0 {
		if err := w.initTimer(); err != nil {
			w.close()
			return nil, err
		}
	}
	return w, nil
}

func (w *worker) initTimer() error {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("timerfd_create: %w", err)
	}
	w.timerfd = fd
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	return unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, fd, &ev)
}

func (w *worker) recorder() *recorder { return w.rec }

func (w *worker) close() {
	for _, c := range w.conns {
		if c.fd >= 0 {
			unix.Close(c.fd)
			c.fd = -1
		}
	}
	if w.timerfd >= 0 {
		unix.Close(w.timerfd)
	}
	unix.Close(w.epfd)
}

// setup connects and hands shakes every connection, at most maxConnecting
// at a time. A connect completes with the handshake, before the server
// accepts it, so this does not keep a small listen queue from
// overflowing (netevidence.go reports it when it does).
func (w *worker) setup() error {
	const maxConnecting = 64
	next, inProgress := 0, 0
	for w.countState(stReady) < len(w.conns) {
		if w.r.abort.Load() {
			return nil
		}
		for next < len(w.conns) && inProgress < maxConnecting {
			if err := w.dial(w.conns[next]); err != nil {
				return err
			}
			next++
			inProgress++
		}
		if err := w.poll(100); err != nil {
			return err
		}
		inProgress = next - w.countState(stReady)
		if err := w.checkConnectTimeouts(); err != nil {
			return err
		}
	}
	return nil
}

func (w *worker) countState(s connState) int {
	n := 0
	for _, c := range w.conns {
		if c.state == s {
			n++
		}
	}
	return n
}

func (w *worker) dial(c *conn) error {
	domain, sa := w.addrOf(c)
	fd, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w (raise the open-files limit: ulimit -n)", err)
	}
	if domain != unix.AF_UNIX {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	err = unix.Connect(fd, sa)
	if err != nil && !errors.Is(err, unix.EINPROGRESS) {
		unix.Close(fd)
		return w.connectFailed(c, errnoName(err), err)
	}
	c.fd, c.state, c.started, c.primaryVer = fd, stConnecting, w.r.now(), w.primaryVer
	if c.q.size == 0 { // --cluster --reconnect: requests queued while down are kept
		c.out = c.out[:0]
	}
	c.outOff, c.in, c.prefix, c.wantOut = 0, c.in[:0], 0, false
	for fd >= len(w.byFD) {
		w.byFD = append(w.byFD, make([]*conn, len(w.byFD)+64)...)
	}
	w.byFD[fd] = c
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT, Fd: int32(fd)}
	if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

// connectFailed counts a failed connect and dials again while
// --connect-retries allows; otherwise the run ends with the error.
func (w *worker) connectFailed(c *conn, cause string, err error) error {
	w.rec.connectFailed(cause)
	if c.fd >= 0 {
		unix.Close(c.fd)
		w.byFD[c.fd] = nil
		c.fd = -1
	}
	if w.reconnecting() {
		now := w.r.now()
		w.rec.fo.fail(now, connectKind(cause), 0, true)
		w.goDown(c, connectKind(cause), now)
		return nil
	}
	if c.retries >= w.r.o.ConnectRetries {
		return w.r.connectErrorAt(w.target(c), err)
	}
	c.retries++
	w.rec.retries++
	return w.dial(c)
}

func (w *worker) checkConnectTimeouts() error {
	now := w.r.now()
	for _, c := range w.conns {
		if c.state == stConnecting && now-c.started > int64(w.r.o.Timeout) {
			if err := w.connectFailed(c, "timeout", fmt.Errorf("no connection within %s", w.r.o.Timeout)); err != nil {
				return err
			}
		}
		if c.state == stHandshake && now-c.lastIO > int64(w.r.o.Timeout) {
			if err := w.lost(c, kindTimeout, fmt.Errorf("no reply to the connection set-up commands (AUTH/SELECT/HELLO) within %s", w.r.o.Timeout)); err != nil {
				return err
			}
		}
	}
	return nil
}

// poll waits up to ms milliseconds and handles what is ready.
func (w *worker) poll(ms int) error {
	n, err := rawEpollWait(w.epfd, w.events[:], ms)
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return nil
		}
		return fmt.Errorf("epoll_wait: %w", err)
	}
	for i := range n {
		ev := &w.events[i]
		fd := int(ev.Fd)
		if fd == w.timerfd {
			var b [8]byte
			unix.Read(fd, b[:])
			w.timerSet = false
			continue
		}
		c := w.byFD[fd]
		if c == nil || c.fd != fd {
			continue
		}
		if err := handleEvents(w, c, ev.Events); err != nil {
			return err
		}
	}
	return nil
}

// connHandler is what an event loop (a worker, a churn loop) does with
// one connection's events.
type connHandler interface {
	connected(c *conn) error
	flush(c *conn) error
	readable(c *conn) error
}

// handleEvents dispatches one epoll event of c: the end of its connect,
// room to write what is pending, data (or a hang-up) to read.
func handleEvents(h connHandler, c *conn, events uint32) error {
	if c.state == stConnecting {
		return h.connected(c)
	}
	if events&unix.EPOLLOUT != 0 && c.wantOut {
		if err := h.flush(c); err != nil {
			return err
		}
	}
	if events&(unix.EPOLLIN|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		return h.readable(c)
	}
	return nil
}

// connectResult is the outcome of fd's non-blocking connect (SO_ERROR).
func connectResult(fd int) error {
	soerr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soerr != 0 {
		err = unix.Errno(soerr)
	}
	return err
}

func (w *worker) connected(c *conn) error {
	if err := connectResult(c.fd); err != nil {
		return w.connectFailed(c, errnoName(err), err)
	}
	c.retries = 0
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)}
	if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	c.lastIO = w.r.now()
	w.rec.connected(c.lastIO - c.started)
	prefix, count := w.handshake(c)
	if count == 0 {
		return w.ready(c)
	}
	c.state, c.prefix = stHandshake, count
	if len(c.out) > 0 { // requests queued while it was down go after the set-up
		c.out = append(append([]byte(nil), prefix...), c.out...)
	} else {
		c.out = append(c.out[:0], prefix...)
	}
	return w.flush(c)
}

// ready marks a set-up connection; during the run (after a -k 0
// reconnect) it starts sending at once.
func (w *worker) ready(c *conn) error {
	w.rec.isReady(w.r.now() - c.started)
	if !w.r.started.Load() {
		c.state = stReady
		return nil
	}
	c.state = stActive
	if c.redialed {
		c.redialed, c.backoff = false, 0
		w.rec.fo.reconnects++
	}
	if c.outOff < len(c.out) {
		if err := w.flush(c); err != nil {
			return err
		}
	}
	if w.r.o.Rate > 0 || w.cl != nil {
		return nil
	}
	return w.sendBatch(c)
}

// start moves every ready connection to active: the closed loop sends
// each one's first batch; rate mode begins its schedule.
func (w *worker) start() error {
	if w.r.o.Rate > 0 {
		now := w.r.now()
		w.pacer = newFixedRate(w.r.o.Rate, len(w.r.loops), w.id, now)
		if w.r.o.Duration > 0 {
			// Exactly the requests due in the loop's --duration are sent.
			w.end = now + int64(w.r.o.Warmup+w.r.o.Duration)
			w.rec.end = w.end
		}
		w.issuing = true
	}
	for _, c := range w.conns {
		c.state = stActive
		if w.r.o.Rate == 0 && w.cl == nil {
			if err := w.sendBatch(c); err != nil {
				return err
			}
		}
	}
	if w.cl != nil && w.r.o.Rate == 0 {
		return w.startGroups()
	}
	return nil
}

// sendBatch writes the connection's next batch of up to Pipeline requests.
func (w *worker) sendBatch(c *conn) error {
	k := w.r.claim(w.r.o.Pipeline)
	if k == 0 {
		w.finish(c)
		return nil
	}
	measured := w.r.measuring.Load()
	c.out = c.out[:0]
	for range k {
		var cls uint8
		c.out, cls = w.gen.appendRequest(c.out)
		c.q.push(pending{class: cls, measured: measured, extra: w.gen.extra})
	}
	now := w.r.now()
	for i := range k {
		p := &c.q.buf[(c.q.head+i)%len(c.q.buf)]
		p.sent, p.intended = now, now
	}
	w.pending += k
	c.lastIO = now
	return w.flush(c)
}

func (w *worker) finish(c *conn) {
	if c.state == stDown {
		w.down--
		w.failQueue(c, int(c.downKind), w.r.now())
	}
	if c.state != stDone {
		c.state = stDone
		w.live--
	}
}

func (w *worker) flush(c *conn) error {
	if c.fd < 0 || c.state == stConnecting {
		return nil // --reconnect: sent once it is set up again
	}
	blocked, err := writeOut(c)
	switch {
	case blocked:
		return w.watchOut(c, true)
	case err != nil:
		if cause := w.refusedBeforeClose(c); cause != nil {
			return cause
		}
		return w.lost(c, kindReset, w.r.ioErrorAt(w.target(c), "write", err, c.q.size))
	}
	c.out, c.outOff = c.out[:0], 0
	return w.watchOut(c, false)
}

// writeOut writes what is left of c.out; blocked means the socket buffer
// is full (wait for EPOLLOUT to write the rest).
func writeOut(c *conn) (blocked bool, err error) {
	for c.outOff < len(c.out) {
		n, err := rawWrite(c.fd, c.out[c.outOff:])
		if n > 0 {
			c.outOff += n
			continue
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.EAGAIN) {
			return true, nil
		}
		return false, err
	}
	return false, nil
}

// refusedBeforeClose looks for the error reply a server sends before it
// closes a connection it refuses (Redis at maxclients): a write to the
// closed connection can fail before the read that would have found it.
func (w *worker) refusedBeforeClose(c *conn) error {
	var buf [256]byte
	n, _ := rawRead(c.fd, buf[:])
	if n <= 0 {
		return nil
	}
	if size, kind, _, err := resp.Scan(buf[:n]); err == nil && size > 0 && kind == resp.KindError {
		return w.r.refusedError(buf[:size])
	}
	return nil
}

func (w *worker) watchOut(c *conn, on bool) error { return watchOut(w.epfd, c, on) }

// watchOut turns the wait for room to write on c on or off in epfd.
func watchOut(epfd int, c *conn, on bool) error {
	if c.wantOut == on {
		return nil
	}
	c.wantOut = on
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(c.fd)}
	if on {
		ev.Events |= unix.EPOLLOUT
	}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	return nil
}

func (w *worker) readable(c *conn) error {
	if cap(c.in)-len(c.in) < readChunk/4 {
		c.in = growBuf(c.in, len(c.in)+readChunk)
	}
	n, err := rawRead(c.fd, c.in[len(c.in):cap(c.in)])
	if n <= 0 {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			return nil
		}
		if err == nil {
			return w.lost(c, kindReset, w.r.closedErrorAt(w.target(c), c.q.size))
		}
		return w.lost(c, readKind(err), w.r.ioErrorAt(w.target(c), "read", err, c.q.size))
	}
	now := w.r.now()
	c.in = c.in[:len(c.in)+n]
	used, err := w.consume(c, now)
	if c.drop != 0 {
		kind := int(c.drop - 1)
		c.drop = 0
		return w.lost(c, kind, err)
	}
	if err != nil || c.fd < 0 { // c.fd < 0: a redirection failed c itself
		return err
	}
	rest := copy(c.in, c.in[used:])
	c.in = c.in[:rest]
	if w.cl != nil {
		return w.clusterAfterRead(c)
	}
	if c.state == stActive && c.q.size == 0 && w.r.o.Rate == 0 {
		return w.batchDone(c)
	}
	if c.state == stActive && c.q.size == 0 && !w.issuing {
		w.finish(c)
	}
	return nil
}

// consume parses every complete reply in c.in and returns the bytes used.
func (w *worker) consume(c *conn, now int64) (int, error) {
	w.rec.mu.Lock()
	defer w.rec.mu.Unlock()
	pos := 0
	for pos < len(c.in) {
		n, kind, need, err := resp.Scan(c.in[pos:])
		if err != nil {
			return 0, fmt.Errorf("reading replies from %s: %w", w.target(c), err)
		}
		if n == 0 {
			if err := w.r.partialReply(w.target(c), len(c.in)-pos, need); err != nil {
				return 0, err
			}
			if need > cap(c.in)-pos {
				c.in = growBuf(c.in, pos+need)
			}
			break
		}
		reply := c.in[pos : pos+n]
		pos += n
		if kind == resp.KindPush {
			continue
		}
		c.lastIO = now // --timeout is per reply: bytes of one do not extend it
		if c.state == stHandshake {
			if err := w.handshakeReply(c, kind, reply); err != nil || c.drop != 0 {
				return 0, err
			}
			continue
		}
		if c.q.size == 0 {
			if kind == resp.KindError {
				return 0, w.r.unsolicitedError(reply)
			}
			return 0, fmt.Errorf("reply with no request outstanding from %s: %q", w.target(c), clip(reply))
		}
		if h := &c.q.buf[c.q.head]; h.extra > 0 {
			// A reply inside a group (MULTI's +OK, a +QUEUED): the
			// request is timed by its last.
			h.extra--
			if kind == resp.KindError {
				return 0, w.r.replyError(reply, h.class)
			}
			continue
		}
		p := c.q.pop()
		w.pending--
		if w.cl != nil {
			if err := w.clusterReply(c, p, kind, reply, now); err != nil {
				return 0, err
			}
			continue
		}
		if kind == resp.KindError {
			if w.failedReply(c, p, reply, now) {
				continue
			}
			return 0, w.r.replyError(reply, p.class)
		}
		if p.measured {
			w.rec.record(p, now)
		}
	}
	return pos, nil
}

func (w *worker) handshakeReply(c *conn, kind resp.Kind, reply []byte) error {
	if k, ok := replyKind(reply); ok && kind == resp.KindError && w.reconnecting() {
		c.drop = uint8(k + 1) // set up again: a server loading, or a replica, now
		return nil
	}
	if kind == resp.KindError {
		return w.r.handshakeError(reply)
	}
	if c.prefix--; c.prefix == 0 {
		return w.ready(c)
	}
	return nil
}

// batchDone runs when every request of a closed-loop batch is answered:
// send the next batch, on a fresh connection with -k 0.
func (w *worker) batchDone(c *conn) error {
	if (!w.r.o.KeepAlive || w.primaryMoved(c)) && w.r.issuingOpen() {
		// -k 0, or --sentinel named a new primary: the next batch goes
		// on a new connection (to it).
		unix.Close(c.fd)
		w.byFD[c.fd] = nil
		c.fd = -1
		return w.dial(c)
	}
	return w.sendBatch(c)
}

// loop runs the measurement until every connection is done or the run is
// aborted.
func (w *worker) loop() error {
	for w.live > 0 && !w.r.abort.Load() {
		ms := 100
		if w.r.o.Rate > 0 {
			var err error
			if ms, err = w.pace(); err != nil {
				return err
			}
			if !w.issuing && (w.pending == 0 || w.drained) {
				break
			}
		}
		if w.down > 0 {
			wait, err := w.redial()
			if err != nil {
				return err
			}
			ms = min(ms, wait)
		}
		if err := w.poll(ms); err != nil {
			return err
		}
		if err := w.housekeeping(); err != nil {
			return err
		}
	}
	return nil
}

func (w *worker) housekeeping() error {
	now := w.r.now()
	if now-w.lastSweep < int64(100*time.Millisecond) {
		return nil
	}
	w.lastSweep = now
	if w.r.stopIssue.Load() && w.r.o.Rate == 0 {
		// Duration over: connections that are between batches are done.
		for _, c := range w.conns {
			if c.state == stActive && c.q.size == 0 && (c.grp == nil || c.grp.outstanding == 0) || c.state == stDown {
				w.finish(c)
			}
		}
	}
	if err := w.clusterRefreshed(); err != nil {
		return err
	}
	for _, c := range w.conns {
		if c.q.size > 0 && now-c.lastIO > int64(w.r.o.Timeout) {
			if err := w.lost(c, kindTimeout, w.r.timeoutErrorAt(w.target(c), c.q.size)); err != nil {
				return err
			}
		}
	}
	return w.checkConnectTimeouts() // -k 0 reconnects during the run
}

// pace issues every request whose time has come (open loop) and returns
// how long poll may wait.
func (w *worker) pace() (int, error) {
	now := w.r.now()
	w.checkEnd(now)
	for w.issuing {
		due := w.pacer.due(w.seq)
		if due > now {
			break
		}
		if w.cl != nil {
			issued, err := w.clusterIssue(due, now)
			if err != nil {
				return 0, err
			}
			if !issued {
				break
			}
			w.seq++
			continue
		}
		c := w.pick()
		if c == nil {
			break // every connection is at MaxPending: the request is late
		}
		if !w.r.claimDue(due, w.end) {
			w.issuing = false
			break
		}
		var cls uint8
		c.out, cls = w.gen.appendRequest(c.out)
		c.q.push(pending{sent: now, intended: due, class: cls, measured: w.r.measuring.Load(), extra: w.gen.extra})
		if c.q.size == 1 {
			c.lastIO = now
		}
		w.pending++
		w.seq++
		if err := w.flush(c); err != nil {
			return 0, err
		}
	}
	if w.issuing && !w.holding() && !w.r.dueOpen(w.pacer.due(w.seq), w.end) {
		w.issuing = false
	}
	if !w.issuing {
		for _, c := range w.conns {
			if c.state == stActive && c.q.size == 0 || c.state == stDown {
				w.finish(c)
			}
		}
		return 100, nil
	}
	return w.armTimer(w.pacer.due(w.seq) - w.r.now())
}

// checkEnd accounts for the end of --duration: once when it comes, what
// was late or outstanding; at the drain limit, what is cut off (the loop
// then stops).
func (w *worker) checkEnd(now int64) {
	end := w.end
	if end == 0 || now < end || w.drained {
		return
	}
	d := &w.rec.drain
	if !w.endSeen {
		w.endSeen = true
		d.LateAtEnd, d.OutstandingAtEnd = w.dueUnsent(end), int64(w.pending)
	}
	if now >= end+int64(w.r.o.Drain) {
		w.drained = true
		d.Unsent, d.Unanswered = w.dueUnsent(end), int64(w.pending)
		w.issuing = false
	}
}

// dueUnsent counts this loop's requests due before end and not sent yet.
func (w *worker) dueUnsent(end int64) int64 {
	if !w.issuing {
		return 0
	}
	n := w.seq
	for w.pacer.due(n) < end {
		n++
	}
	if w.r.measuring.Load() {
		return min(n-w.seq, max(w.r.budget.Load(), 0))
	}
	return n - w.seq
}

// pick returns the next active connection with room, round-robin.
func (w *worker) pick() *conn {
	for range w.conns {
		c := w.conns[w.rr]
		if w.rr++; w.rr == len(w.conns) {
			w.rr = 0
		}
		if c.state == stActive && c.q.size < w.r.o.MaxPending {
			return c
		}
	}
	return nil
}

// armTimer makes poll return when the next request is due: epoll_wait's
// millisecond timeout is too coarse for high rates, so a timerfd gives
// nanosecond precision; very short waits just poll without blocking.
func (w *worker) armTimer(delay int64) (int, error) {
	ms, armed, err := armTimerFD(w.timerfd, delay)
	w.timerSet = w.timerSet || armed
	return ms, err
}

// armTimerFD arms timerfd to fire after delay when epoll_wait's timeout is
// too coarse for it, and returns how long poll may wait.
func armTimerFD(timerfd int, delay int64) (ms int, armed bool, err error) {
	if delay <= int64(20*time.Microsecond) {
		return 0, false, nil
	}
	if delay >= int64(100*time.Millisecond) {
		return 100, false, nil
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(delay)}
	if err := unix.TimerfdSettime(timerfd, 0, &spec, nil); err != nil {
		return 0, false, fmt.Errorf("timerfd_settime: %w", err)
	}
	return 100, true, nil
}

// run is the worker's goroutine: locked to its thread, set up, wait for
// the start, measure.
func (w *worker) run(ready chan<- error, start <-chan struct{}) error {
	runtime.LockOSThread()
	restore, err := w.placeThread()
	defer func() {
		// A thread that cannot be put back stays locked and ends with
		// this goroutine rather than serve others in the wrong place.
		if restore() == nil {
			runtime.UnlockOSThread()
		}
	}()
	if err == nil {
		err = w.setup()
	}
	ready <- err
	if err != nil {
		return err
	}
	<-start
	if w.r.abort.Load() {
		return nil
	}
	if err := w.start(); err != nil {
		return err
	}
	return w.loop()
}

// placeThread moves the worker's thread into the load's network namespace
// and onto the client's CPUs, and returns how to undo both.
func (w *worker) placeThread() (func() error, error) {
	var undo []func() error
	restore := func() error {
		var first error
		for i := len(undo) - 1; i >= 0; i-- {
			if err := undo[i](); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	if w.r.o.NetNS != "" {
		back, err := netns.Enter(w.r.o.NetNS)
		if err != nil {
			return restore, err
		}
		undo = append(undo, back)
	}
	if len(w.r.o.CPUs) > 0 {
		var old unix.CPUSet
		if err := unix.SchedGetaffinity(0, &old); err != nil {
			return restore, fmt.Errorf("read the thread's CPU affinity: %w", err)
		}
		if err := pinThread(w.r.o.CPUs); err != nil {
			return restore, err
		}
		undo = append(undo, func() error { return unix.SchedSetaffinity(0, &old) })
	}
	return restore, nil
}

func pinThread(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("pin the load generator to CPUs %v: %w", cpus, err)
	}
	return nil
}

// errnoName names a connect failure: ECONNREFUSED, EADDRNOTAVAIL, ...
func errnoName(err error) string {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	var errno unix.Errno
	if errors.As(err, &errno) {
		if name := unix.ErrnoName(errno); name != "" {
			return name
		}
	}
	return "other"
}

func growBuf(b []byte, n int) []byte {
	nb := make([]byte, len(b), max(n, 2*cap(b)))
	copy(nb, b)
	return nb
}

func clip(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "..."
	}
	return string(b)
}
