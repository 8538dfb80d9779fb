package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// stalledLink is an output whose writes block until released: a link
// that stopped taking data.
type stalledLink struct{ writing, release chan struct{} }

func (l stalledLink) Write(p []byte) (int, error) {
	close(l.writing)
	<-l.release
	return len(p), nil
}

// TestCleanupPastStalledReply: an async reply blocked on a stalled link
// holds the output; once the loop has ended, replies are dropped and the
// cleanup goes on past it (to the steer stops, rollbacks and server
// stops) within asyncWait, saying what it left.
func TestCleanupPastStalledReply(t *testing.T) {
	defer func(d time.Duration) { asyncWait = d }(asyncWait)
	asyncWait = 100 * time.Millisecond
	link := stalledLink{writing: make(chan struct{}), release: make(chan struct{})}
	defer close(link.release)
	s := &session{o: SessionOptions{StateDir: t.TempDir()}, id: "t", out: json.NewEncoder(link)}
	s.async.Go(func() { _ = s.reply(Response{ID: 1}) })
	<-link.writing
	s.ended.Store(true)
	if err := s.reply(Response{ID: 2}); err != errEnded {
		t.Errorf("reply after the end: %v, want it dropped", err)
	}
	c := s.cleanup("test")
	if len(c.Errors) != 1 || !strings.Contains(c.Errors[0], "blocked on the link") {
		t.Errorf("cleanup errors %q", c.Errors)
	}
}

// TestSwitchFiresPastAStuckOperation (issue 24, item 8): an operation
// blocked on something a server named (a FIFO for a config file) held the
// loop, so SIGTERM and the heartbeat timeout were never looked at and the
// cleanup never ran. The loop now hands each request off and keeps
// watching; the heartbeats that arrive meanwhile are answered.
func TestSwitchFiresPastAStuckOperation(t *testing.T) {
	const op = "test.stuck"
	entered, unblock := make(chan struct{}), make(chan struct{})
	defer close(unblock)
	h := stuckHandler{op: op, entered: entered, unblock: unblock}
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	replies := bufio.NewScanner(outR)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan *Cleanup)
	go func() {
		done <- Serve(ctx, inR, outW, SessionOptions{StateDir: t.TempDir(), Host: func(string) Handler { return h }})
	}()
	fmt.Fprintf(inW, `{"id":1,"op":%q}`+"\n", op)
	<-entered
	fmt.Fprintf(inW, `{"id":2,"op":"heartbeat"}`+"\n")
	if !replies.Scan() || !strings.Contains(replies.Text(), `"id":2`) {
		t.Fatalf("the heartbeat during a stuck operation: %q", replies.Text())
	}
	cancel(errors.New("SIGTERM"))
	c := <-done
	if !strings.Contains(c.Reason, "SIGTERM") {
		t.Errorf("cleanup reason %q", c.Reason)
	}
}

// stuckHandler's operation op blocks until unblock is closed, ignoring
// its context, as a blocking open does.
type stuckHandler struct {
	op               string
	entered, unblock chan struct{}
}

func (stuckHandler) Async(context.Context, string, json.RawMessage) (func() (any, error), error) {
	return nil, ErrUnknownOp
}

func (h stuckHandler) Do(_ context.Context, op string, _ json.RawMessage) (any, error) {
	if op != h.op {
		return nil, ErrUnknownOp
	}
	close(h.entered)
	<-h.unblock
	return nil, nil
}

func (stuckHandler) End(context.Context, *Cleanup) {}
