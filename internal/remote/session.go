package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"redline/internal/atomicfile"
)

// SessionOptions configure the host side of a session.
type SessionOptions struct {
	// Version is this redline's version: the only one a client may be.
	Version string
	// StateDir holds the tune journal and the saved cleanups; the
	// caller's default (the server-host API's) when empty is an error.
	StateDir string
	// Host answers the session's operations: the server-host API's
	// in-process side, made for the session named id. It keeps the
	// ledger of what the operations started, which End undoes.
	Host func(id string) Handler
	// Log receives one line per operation (never arguments: they may
	// hold passwords); nil discards.
	Log io.Writer
	// Worker makes it a local bench worker of the redline that started it
	// over pipes (`redline session --worker`, LocalWorker; its Host
	// answers the bench operations only, serverhost.ServeWorker): it has
	// no state directory, so it neither takes nor saves cleanup reports,
	// which are other sessions' news.
	Worker bool
}

// Handler answers a session's operations other than hello, heartbeat
// and bye: it validates each request and calls the in-process
// implementation (internal/serverhost). The session only carries them.
type Handler interface {
	// Async starts an operation whose reply waits for as long as a
	// benchmark (a bench worker's prepare and result): the session sends
	// what wait returns once it returns, and keeps reading requests
	// meanwhile. An operation that is not one of these is an error
	// wrapping ErrUnknownOp (the session then asks Do).
	Async(ctx context.Context, op string, args json.RawMessage) (wait func() (any, error), err error)
	// Do answers op; an operation it does not know is an error wrapping
	// ErrUnknownOp.
	Do(ctx context.Context, op string, args json.RawMessage) (any, error)
	// End undoes what the operations left (bench workers, steers, scoped
	// applies, servers, in that order) and records it in c.
	End(ctx context.Context, c *Cleanup)
}

// ErrUnknownOp is a Handler's answer to an operation it does not serve.
var ErrUnknownOp = errors.New("unknown operation")

// session is one running session's state.
type session struct {
	o       SessionOptions
	id      string
	host    Handler
	out     *json.Encoder
	outMu   sync.Mutex
	timeout time.Duration
	byeID   uint64 // the bye request, answered after the cleanup
	// async counts the replies still to be sent by the handler's Async
	// operations.
	async sync.WaitGroup
	// ended is set when the loop returns: replies are dropped from then
	// on, so a reply stuck on a stalled link cannot hold up the cleanup.
	ended atomic.Bool
}

// asyncWait bounds the cleanup's wait for the async replies: one may be
// blocked writing to a link that stalled.
var asyncWait = 10 * time.Second

// errEnded is a reply's error once the session's loop has returned.
var errEnded = errors.New("the session ended: reply dropped")

// errBye ends the loop after a bye was answered.
var errBye = errors.New("bye")

// Serve runs a session on in and out until the client says bye, in ends,
// ctx is cancelled (the command cancels it on SIGHUP and SIGTERM) or no
// request arrives for the heartbeat timeout. Whichever way it ends, it
// rolls back the scoped applies and stops the servers it started, and
// returns what it did; a cleanup not caused by bye is also saved in the
// state directory for the next session's hello to report.
func Serve(ctx context.Context, in io.Reader, out io.Writer, o SessionOptions) *Cleanup {
	s := &session{o: o, id: newSessionID(), out: json.NewEncoder(out), timeout: DefaultHeartbeatTimeout}
	if o.Host != nil {
		s.host = o.Host(s.id)
	}
	reason := s.loop(ctx, in)
	s.ended.Store(true)
	c := s.cleanup(reason)
	if reason == "bye" {
		// bye is answered once the cleanup is done, with what it did: its
		// errors reach the client, not only this session's log.
		s.outMu.Lock()
		_ = s.out.Encode(response(s.byeID, c, nil)) // a lost link: nobody to tell
		s.outMu.Unlock()
	} else if !o.Worker {
		s.saveCleanup(c)
	}
	return c
}

// loop answers requests and returns why it stopped. Each request is
// handled off the loop, one at a time and in order, while the loop keeps
// watching the signal, the input and the heartbeat timer (heartbeats that
// arrive meanwhile reset it): an operation stuck on something a server or
// a file named (a FIFO, a hung Redis) never keeps the dead man's switch
// from firing.
func (s *session) loop(ctx context.Context, in io.Reader) string {
	lines, readErr := readLines(in)
	opCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := time.NewTimer(s.timeout)
	defer timer.Stop()
	var queue [][]byte
	var running chan error
	for {
		if running == nil && len(queue) > 0 {
			running = make(chan error, 1)
			go func(line []byte) { running <- s.handle(opCtx, line) }(queue[0])
			queue = queue[1:]
		}
		select {
		case <-ctx.Done():
			return "signal: " + context.Cause(ctx).Error()
		case <-timer.C:
			return fmt.Sprintf("no heartbeat for %s", s.timeout)
		case err := <-running:
			running = nil
			if errors.Is(err, errBye) {
				return "bye"
			}
		case line, ok := <-lines:
			if !ok {
				if err := <-readErr; err != nil {
					return "input: " + err.Error()
				}
				return "input closed (the link or the client went away)"
			}
			timer.Reset(s.timeout)
			if id, ok := heartbeatID(line); ok && running != nil {
				// The client beats while it waits for a reply, and takes
				// the beats' replies as a sign of life.
				s.reply(response(id, struct{}{}, nil))
				continue
			}
			queue = append(queue, line)
		}
	}
}

// heartbeatID returns the id of a heartbeat request line.
func heartbeatID(line []byte) (uint64, bool) {
	var req Request
	err := json.Unmarshal(line, &req)
	return req.ID, err == nil && req.Op == OpHeartbeat
}

// readLines feeds in's lines to a channel, closed at the end of input.
func readLines(in io.Reader) (<-chan []byte, <-chan error) {
	lines, errc := make(chan []byte), make(chan error, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), MaxLine)
		for sc.Scan() {
			lines <- append([]byte(nil), sc.Bytes()...)
		}
		errc <- sc.Err()
	}()
	return lines, errc
}

func (s *session) logf(format string, args ...any) {
	if s.o.Log != nil {
		fmt.Fprintf(s.o.Log, "redline session %s: "+format+"\n", append([]any{s.id}, args...)...)
	}
}

// handle answers one request line.
func (s *session) handle(ctx context.Context, line []byte) error {
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		return s.reply(Response{Error: "bad request: " + err.Error()})
	}
	if req.Op != OpHeartbeat {
		s.logf("%s", req.Op)
	}
	if req.Op == OpBye {
		s.byeID = req.ID // answered by Serve, after the cleanup
		return errBye
	}
	if s.host != nil && req.Op != OpHello && req.Op != OpHeartbeat {
		wait, err := s.host.Async(ctx, req.Op, req.Args)
		if !errors.Is(err, ErrUnknownOp) {
			return s.handleAsync(req, wait, err)
		}
	}
	res, err := s.do(ctx, req.Op, req.Args)
	return s.reply(response(req.ID, res, err))
}

// handleAsync answers an operation that waits (a bench worker's start or
// end) from its own goroutine, so the loop keeps reading heartbeats and
// notices a lost link meanwhile.
func (s *session) handleAsync(req Request, wait func() (any, error), err error) error {
	if err != nil {
		return s.reply(Response{ID: req.ID, Error: err.Error()})
	}
	s.async.Go(func() {
		res, err := wait()
		_ = s.reply(response(req.ID, res, err)) // a lost link: nobody to tell
	})
	return nil
}

// response is the reply to request id: res encoded, or err.
func response(id uint64, res any, err error) Response {
	resp := Response{ID: id}
	if err != nil {
		resp.Error = err.Error()
	} else if resp.Result, err = json.Marshal(res); err != nil {
		resp.Error = "encode result: " + err.Error()
		resp.Result = nil
	}
	return resp
}

func (s *session) reply(r Response) error {
	if s.ended.Load() {
		return errEnded
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if s.ended.Load() {
		return errEnded
	}
	return s.out.Encode(r)
}

// waitAsync waits for the async replies' goroutines, at most asyncWait
// or until ctx ends; it says when some were left (blocked on the link).
func (s *session) waitAsync(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.async.Wait()
		close(done)
	}()
	t := time.NewTimer(asyncWait)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	return fmt.Errorf("a reply still blocked on the link after %s: left behind", asyncWait)
}

// decodeArgs decodes an operation's arguments strictly.
func decodeArgs(raw json.RawMessage, v any) error { return DecodeArgs(raw, v) }

// DecodeArgs decodes an operation's arguments strictly: a field the
// operation does not have is an error, not something silently dropped.
func DecodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad arguments: %w", err)
	}
	return nil
}

func newSessionID() string {
	return fmt.Sprintf("%s-%d", time.Now().UTC().Format("20060102T150405Z"), os.Getpid())
}

// cleanup has the handler undo what its operations left (the bench
// workers first: they load a server, perhaps one of those it stops), then
// waits for the async replies, which the workers' end lets go. It has its
// own deadline: the session's context may be gone.
func (s *session) cleanup(reason string) *Cleanup {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := &Cleanup{Session: s.id, Reason: reason, Time: time.Now().UTC()}
	if s.host != nil {
		s.host.End(ctx, c)
	}
	if err := s.waitAsync(ctx); err != nil {
		c.Errors = append(c.Errors, err.Error())
	}
	s.logf("ended (%s): %d bench worker(s) stopped, %d steer(s) stopped, %d apply(s) rolled back, %d server(s) stopped, %d error(s)",
		reason, c.Benches, len(c.Steered), len(c.Restored), len(c.Stopped), len(c.Errors))
	return c
}

// cleanupDir is where cleanups wait for the next hello.
func (s *session) cleanupDir() string { return filepath.Join(s.o.StateDir, "remote") }

func (s *session) saveCleanup(c *Cleanup) {
	if len(c.Restored) == 0 && len(c.Stopped) == 0 && len(c.Steered) == 0 && len(c.Errors) == 0 && c.Benches == 0 {
		return
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err == nil {
		err = os.MkdirAll(s.cleanupDir(), 0o700)
	}
	if err == nil {
		err = atomicfile.Write(filepath.Join(s.cleanupDir(), "cleanup-"+c.Session+".json"), b, 0o600) // never read half-written
	}
	if err != nil {
		s.logf("save cleanup report: %v", err)
	}
}
