package remote_test

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"redline/internal/remote"
)

// fakeHost is a server-host side that answers "echo" and leaves one
// stopped server and an error in every cleanup.
type fakeHost struct{}

func (fakeHost) Async(context.Context, string, json.RawMessage) (func() (any, error), error) {
	return nil, remote.ErrUnknownOp
}

func (fakeHost) Do(_ context.Context, op string, args json.RawMessage) (any, error) {
	if op == "echo" {
		return args, nil
	}
	return nil, remote.ErrUnknownOp
}

func (fakeHost) End(_ context.Context, c *remote.Cleanup) {
	c.Stopped = append(c.Stopped, remote.RedisServer{ID: "srv1", Pid: 42})
	c.Errors = append(c.Errors, "stop redis-server srv1: it would not stop")
}

// pipeSession runs a session of version "test" on pipes, with fakeHost
// as its server-host side.
func pipeSession(t *testing.T, _, state string) (*remote.Client, io.Closer, <-chan *remote.Cleanup) {
	t.Helper()
	return pipeSessionOf(t, "test", state)
}

func pipeSessionOf(t *testing.T, version, state string) (*remote.Client, io.Closer, <-chan *remote.Cleanup) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan *remote.Cleanup, 1)
	go func() {
		done <- remote.Serve(context.Background(), inR, outW, remote.SessionOptions{Version: version, StateDir: state,
			Host: func(string) remote.Handler { return fakeHost{} }})
		outW.Close()
	}()
	return remote.NewClient(outR, inW, nil), inW, done
}

// TestVersionMismatch: the version is the protocol. A session refuses a
// client of another version, and a client refuses a session of another
// version (one from before the version became the protocol answers
// hello), each in one message naming both versions and what to do.
func TestVersionMismatch(t *testing.T) {
	ctx := context.Background()
	c, in, done := pipeSessionOf(t, "v2", t.TempDir())
	err := c.Handshake(ctx, "v1", 0, 0)
	if !remote.IsVersionMismatch(err) || !strings.Contains(err.Error(), `session is "v2", the client "v1"`) || !strings.Contains(err.Error(), "same redline") {
		t.Errorf("a client of another version: %v", err)
	}
	// An old client's hello (protocols 1..3) gets the same refusal, not a
	// protocol number or an unknown field.
	err = c.Call(ctx, remote.OpHello, map[string]any{"protocol": 3, "min_protocol": 1, "version": "v0"}, nil)
	if !remote.IsVersionMismatch(err) || !strings.Contains(err.Error(), `the client "v0"`) {
		t.Errorf("an old client's hello: %v", err)
	}
	in.Close()
	<-done

	// The client's side: a session of another version that answers hello
	// (as one from before this rule does).
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		var req remote.Request
		json.NewDecoder(inR).Decode(&req)
		json.NewEncoder(outW).Encode(remote.Response{ID: req.ID, Result: json.RawMessage(`{"protocol":3,"version":"v0","hostname":"old"}`)})
	}()
	c2 := remote.NewClient(outR, inW, nil)
	err = c2.Handshake(ctx, "v1", 0, 0)
	if !remote.IsVersionMismatch(err) || !strings.Contains(err.Error(), `session is "v0", the client "v1"`) {
		t.Errorf("a session of another version: %v", err)
	}
	inW.Close()
	outW.Close()
}

// TestCleanupReportKeptForItsClient: a cleanup saved by a session that
// lost its client is reported to the next hello, and still to the hello
// of the client that waits for it by its session's name (a lab learning
// what its lost session did), even when another client's hello came
// first; then it is gone.
func TestCleanupReportKeptForItsClient(t *testing.T) {
	ctx := context.Background()
	state := t.TempDir()
	c, in, done := pipeSession(t, "", state)
	if err := c.Handshake(ctx, "test", 0, 0); err != nil {
		t.Fatal(err)
	}
	lost := c.Hello.Session
	in.Close() // the link goes: the cleanup is saved
	<-done

	hello := func(cleanup string) []remote.Cleanup {
		t.Helper()
		c, in, done := pipeSession(t, "", state)
		if err := c.HandshakeFor(ctx, "test", 0, 0, cleanup); err != nil {
			t.Fatal(err)
		}
		c.Bye(ctx) // fakeHost's cleanup errs: TestByeReportsCleanupErrors
		in.Close()
		<-done
		return c.Hello.Cleanups
	}
	if cl := hello(""); len(cl) != 1 || cl[0].Session != lost {
		t.Fatalf("another client's hello: cleanups %+v, want %s's", cl, lost)
	}
	if cl := hello(lost); len(cl) != 1 || cl[0].Session != lost || len(cl[0].Stopped) != 1 {
		t.Fatalf("its own client's hello after another's: cleanups %+v, want %s's", cl, lost)
	}
	if cl := hello(lost); len(cl) != 0 {
		t.Fatalf("after its client had it: cleanups %+v", cl)
	}
}

// TestByeReportsCleanupErrors: bye is answered after the session's
// cleanup, and what it could not undo is the client's error, not only a
// line in the session's log.
func TestByeReportsCleanupErrors(t *testing.T) {
	ctx := context.Background()
	c, in, done := pipeSession(t, "", t.TempDir())
	defer in.Close()
	if err := c.Handshake(ctx, "test", 0, 0); err != nil {
		t.Fatal(err)
	}
	cl, err := c.ByeCleanup(ctx)
	if err == nil || !strings.Contains(err.Error(), "it would not stop") || cl == nil || len(cl.Stopped) != 1 {
		t.Fatalf("bye: %+v, %v; want the cleanup and its error", cl, err)
	}
	if got := <-done; got.Reason != "bye" {
		t.Fatalf("session ended with %q", got.Reason)
	}
}
