package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// A run stops the way Ctrl-C stops it (the command rolls back what it
// changed, saves what it measured and exits 128+signal) on SIGINT and
// SIGTERM, on SIGHUP (the terminal or the SSH session closed) and SIGQUIT,
// and when its standard output or error goes away: a closed pipe (EPIPE;
// SIGPIPE no longer kills the process) or a hung-up terminal (EIO).
// A signal ignored when redline started stays ignored, so "nohup redline
// lab" goes on after the session closes. A second stop signal ends the
// process at once (what the journal holds, tune rollback restores).
var stopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// errOutputClosed is the cause of a run stopped by a closed output.
var errOutputClosed = errors.New("standard output or error closed")

// stoppedBy is the cause of a run stopped by a signal.
type stoppedBy struct{ sig syscall.Signal }

func (e stoppedBy) Error() string { return fmt.Sprintf("stopped by %v", e.sig) }

// testHookStopping runs once the first stop signal is taken (tests).
var testHookStopping func()

// stopOnSignals returns ctx cancelled, with the signal as its cause, by the
// first stop signal; stop(cause) cancels it otherwise and ends the watch.
func stopOnSignals(ctx context.Context) (context.Context, func(error)) {
	ctx, cancel := context.WithCancelCause(ctx)
	ch := make(chan os.Signal, 1)
	var watched []os.Signal
	for _, sig := range stopSignals {
		if !signal.Ignored(sig) {
			signal.Notify(ch, sig)
			watched = append(watched, sig)
		}
	}
	go func() {
		select {
		case sig := <-ch:
			cancel(stoppedBy{sig.(syscall.Signal)})
			// The run now rolls back and saves; a second signal is
			// someone insisting (a cleanup stuck on a hung server): it
			// ends the process, as an uncaught signal does.
			signal.Reset(watched...)
			if testHookStopping != nil {
				testHookStopping()
			}
		case <-ctx.Done():
		}
	}()
	return ctx, func(cause error) {
		cancel(cause)
		if cause == nil {
			signal.Stop(ch)
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
