package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"redline/internal/earlysignal"
)

// A run stops the way Ctrl-C stops it (the command rolls back what it
// changed, saves what it measured and exits 128+signal) on SIGINT and
// SIGTERM, on SIGHUP (the terminal or the SSH session closed) and SIGQUIT,
// and when its standard output or error goes away: a closed pipe (EPIPE;
// SIGPIPE no longer kills the process) or a hung-up terminal (EIO).
// A signal ignored when redline started stays ignored, so "nohup redline
// lab" goes on after the session closes.
//
// A stop is taken once. GNU timeout signals the process and then its
// process group, systemd and Kubernetes a whole cgroup, and an operator
// presses Ctrl-C twice: the signals within repeatWindow of the first are
// that one stop. A later signal is someone insisting: it is answered on
// stderr, and the rollback and the save still run, since a process that
// ended now would leave the host changed and the measurement lost (only
// SIGKILL does that; `redline tune rollback` restores after it). The first
// signal already stops at once: the measurement's waits end with the
// context, and what remains (the journaled undo, each step bounded by its
// own timeout, and the save) is what a later signal must not skip.
// A signal that came while the process was starting, before this watch,
// was held by internal/earlysignal and is taken as the first.
var stopSignals = earlysignal.Signals

// repeatWindow is how long after the first stop signal further ones are
// the same stop: timeout's two deliveries come microseconds apart, a
// double Ctrl-C within a fraction of a second.
const repeatWindow = time.Second

// errOutputClosed is the cause of a run stopped by a closed output.
var errOutputClosed = errors.New("standard output or error closed")

// stoppedBy is the cause of a run stopped by a signal.
type stoppedBy struct{ sig syscall.Signal }

func (e stoppedBy) Error() string { return fmt.Sprintf("stopped by %v", e.sig) }

// Test hooks: testHookStopping runs once the first stop signal is taken,
// testHookInsisted on each later one (repeats within the window ignored).
var testHookStopping, testHookInsisted func()

// stopOnSignals returns ctx cancelled, with the signal as its cause, by the
// first stop signal; stop(cause) cancels it otherwise, and stop(nil) ends
// the watch. warn receives the answer to a later, insisting signal.
func stopOnSignals(ctx context.Context, warn func(string)) (context.Context, func(error)) {
	ctx, cancel := context.WithCancelCause(ctx)
	ch := make(chan os.Signal, 4)
	for _, sig := range stopSignals {
		if !signal.Ignored(sig) {
			signal.Notify(ch, sig)
		}
	}
	for _, sig := range earlysignal.HandOver() { // came while starting
		select {
		case ch <- sig:
		default: // more repeats than ch holds: the same stop
		}
	}
	done := make(chan struct{})
	go watchSignals(ch, done, cancel, warn)
	var once sync.Once
	return ctx, func(cause error) {
		if cause != nil {
			cancel(cause)
			return
		}
		once.Do(func() {
			signal.Stop(ch)
			close(done)
		})
	}
}

// watchSignals takes the first signal as the stop and answers the later
// ones, until done.
func watchSignals(ch <-chan os.Signal, done <-chan struct{}, cancel context.CancelCauseFunc, warn func(string)) {
	var first time.Time
	for {
		select {
		case <-done:
			return
		case sig := <-ch:
			switch {
			case first.IsZero():
				first = time.Now()
				cancel(stoppedBy{sig.(syscall.Signal)})
				if testHookStopping != nil {
					testHookStopping()
				}
			case time.Since(first) < repeatWindow: // the same stop, delivered again
			default:
				warn(fmt.Sprintf("redline: %s again: already stopping; what was changed is being rolled back and what was measured saved before redline exits (SIGKILL skips that: then run redline tune rollback)", unix.SignalName(sig.(syscall.Signal))))
				if testHookInsisted != nil {
					testHookInsisted()
				}
			}
		}
	}
}

// stoppedCode is the exit code of a stopped run: 128+signal, 128+SIGPIPE
// for a closed output, ExitSignaled otherwise.
func stoppedCode(ctx context.Context) int {
	var sb stoppedBy
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &sb):
		return 128 + int(sb.sig)
	case errors.Is(cause, errOutputClosed):
		return 128 + int(syscall.SIGPIPE)
	}
	return ExitSignaled
}

// signalled reports whether a stop signal or a closed output stopped ctx.
func signalled(ctx context.Context) bool {
	var sb stoppedBy
	cause := context.Cause(ctx)
	return errors.As(cause, &sb) || errors.Is(cause, errOutputClosed)
}

// stoppedWhat names what stopped a run, for messages: the signal, a
// closed output, or Ctrl-C when nothing more is known.
func stoppedWhat(ctx context.Context) string {
	var sb stoppedBy
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &sb) && sb.sig != syscall.SIGINT:
		return unix.SignalName(sb.sig)
	case errors.Is(cause, errOutputClosed):
		return "the output closed"
	}
	return "Ctrl-C"
}

// closedOutput passes writes through until the reader goes away (EPIPE)
// or the terminal hangs up (EIO); then it stops the run and drops the
// rest, so the command can still roll back and save its results.
type closedOutput struct {
	w    io.Writer
	stop func(error)
	dead atomic.Bool
}

func watchOutput(w io.Writer, stop func(error)) io.Writer {
	return &closedOutput{w: w, stop: stop}
}

func (c *closedOutput) Write(p []byte) (int, error) {
	if c.dead.Load() {
		return len(p), nil
	}
	n, err := c.w.Write(p)
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.EIO) {
		c.dead.Store(true)
		c.stop(errOutputClosed)
		return len(p), nil
	}
	return n, err
}

// Fd is the underlying file's descriptor (isTerminal asks), or ^0.
func (c *closedOutput) Fd() uintptr {
	if f, ok := c.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}
