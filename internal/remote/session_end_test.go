package remote

import (
	"encoding/json"
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
