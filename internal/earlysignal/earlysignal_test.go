package earlysignal

import (
	"os"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestHandOverGivesTheEarlySignals: a stop signal received while the
// process starts is held, not its death, and handed over once; a test
// binary does not watch unless it runs as redline.
func TestHandOverGivesTheEarlySignals(t *testing.T) {
	if got := HandOver(); got != nil {
		t.Fatalf("the test binary watched: %v", got)
	}
	watch()
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	// Delivery is asynchronous: wait for it (bounded; not a timing claim).
	for end := time.Now().Add(30 * time.Second); len(early) == 0 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	if got := HandOver(); !slices.Equal(got, []os.Signal{syscall.SIGHUP}) {
		t.Errorf("handed over %v, want [hangup]", got)
	}
	if got := HandOver(); got != nil {
		t.Errorf("handed over again: %v", got)
	}
}
