package earlysignal

import (
	"os"
	"os/signal"
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
	// A signal ignored from the start (nohup, scripts/test-loaded) is not
	// watched, and stays ignored: send one that is watched.
	var sig syscall.Signal
	for _, s := range Signals {
		if !signal.Ignored(s) {
			sig = s.(syscall.Signal)
			break
		}
	}
	if sig == 0 {
		t.Skip("every stop signal is ignored in this process")
	}
	syscall.Kill(os.Getpid(), sig)
	// Delivery is asynchronous: wait for it (bounded; not a timing claim).
	for end := time.Now().Add(30 * time.Second); len(early) == 0 && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	if got := HandOver(); !slices.Equal(got, []os.Signal{sig}) {
		t.Errorf("handed over %v, want [%v]", got, sig)
	}
	if got := HandOver(); got != nil {
		t.Errorf("handed over again: %v", got)
	}
}
