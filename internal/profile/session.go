package profile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"redline/internal/trusted"
)

// AttachTimeout bounds the wait for perf to attach in Start.
const AttachTimeout = 30 * time.Second

// Session is a perf record under way on a process, for as long as the
// caller's measurement lasts (the lab's profiled run): Start, run, Stop.
type Session struct {
	cmd     *exec.Cmd
	data    *PerfData
	started time.Time
	stderr  strings.Builder
	exited  chan error
}

// Start begins perf record -g on o.PID with no set duration (o.Duration
// is ignored) and returns once perf has opened its events on the process,
// read from perf's own /proc/PID/fd (a condition, not a guessed wait), or
// after AttachTimeout. Stop ends it.
func Start(ctx context.Context, o RecordOptions) (*Session, error) {
	o = o.withDefaults()
	return startSession(ctx, o, "-F", strconv.Itoa(o.Frequency), "-g")
}

// StartSwitches is Start for the process's sched:sched_switch events
// (every time one of its threads leaves a CPU, and to whom), read with
// PerfData.Preemptions. It needs tracefs, as CountSyscalls does.
func StartSwitches(ctx context.Context, o RecordOptions) (*Session, error) {
	return startSession(ctx, o.withDefaults(), "-e", "sched:sched_switch")
}

func startSession(ctx context.Context, o RecordOptions, what ...string) (*Session, error) {
	d, err := prepare(o)
	if err != nil {
		return nil, err
	}
	d.rec.Command = append(append([]string{d.perf, "record"}, what...), "-p", strconv.Itoa(o.PID), "--no-buildid-cache", "-o", d.Path)
	s := &Session{data: d, exited: make(chan error, 1)}
	s.cmd = exec.Command(d.rec.Command[0], d.rec.Command[1:]...)
	s.cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS=", "PERF_PAGER=cat")
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		d.cleanup()
		return nil, fmt.Errorf("perf record: %w", err)
	}
	s.started = time.Now()
	go func() { s.exited <- s.cmd.Wait() }()
	if err := s.waitAttached(ctx, o.Proc); err != nil {
		s.kill()
		return nil, err
	}
	return s, nil
}

// prepare checks what Sample and Start both need and chooses perf.data's
// place.
func prepare(o RecordOptions) (*PerfData, error) {
	if o.PID <= 0 {
		return nil, fmt.Errorf("profile: a PID is needed (pid %d)", o.PID)
	}
	perf, err := trusted.Program(o.Perf)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPerfMissing, err)
	}
	if err := checkParanoid(o.Proc, os.Geteuid()); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(o.Proc, strconv.Itoa(o.PID))); err != nil {
		return nil, fmt.Errorf("profile: no process %d: %w", o.PID, err)
	}
	d := &PerfData{perf: perf, cleanup: func() {}}
	dir := o.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "redline-profile-"); err != nil {
			return nil, err
		}
		d.cleanup = func() { os.RemoveAll(dir) }
	}
	d.Path = filepath.Join(dir, "perf.data")
	d.rec = Recording{PID: o.PID, Duration: o.Duration, Frequency: o.Frequency, Exe: exeOf(o.Proc, o.PID)}
	return d, nil
}

// waitAttached polls perf's file descriptors until one is a perf event.
func (s *Session) waitAttached(ctx context.Context, proc string) error {
	fdDir := filepath.Join(proc, strconv.Itoa(s.cmd.Process.Pid), "fd")
	deadline := time.NewTimer(AttachTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if hasPerfEvent(fdDir) {
			return nil
		}
		select {
		case err := <-s.exited:
			s.exited <- err
			return s.failed(err)
		case <-ctx.Done():
			return fmt.Errorf("perf record: stopped: %w", ctx.Err())
		case <-deadline.C:
			return fmt.Errorf("perf record: not attached to process %d within %v", s.data.rec.PID, AttachTimeout)
		case <-tick.C:
		}
	}
}

func hasPerfEvent(fdDir string) bool {
	ents, err := os.ReadDir(fdDir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(fdDir, e.Name())); err == nil && l == "anon_inode:[perf_event]" {
			return true
		}
	}
	return false
}

// failed turns perf's early exit into ErrPerfForbidden or an error with
// the end of its stderr.
func (s *Session) failed(err error) error {
	msg := tail(s.stderr.String(), 400)
	if strings.Contains(msg, "perf_event_paranoid") || strings.Contains(msg, "Permission denied") {
		return fmt.Errorf("%w: %s (as root, or sysctl -w kernel.perf_event_paranoid=1)", ErrPerfForbidden, msg)
	}
	if err == nil {
		err = errors.New("exited")
	}
	return fmt.Errorf("perf record: %w: %s", err, msg)
}

// Abort ends perf without keeping anything, for a measurement that was
// stopped.
func (s *Session) Abort() { s.kill() }

func (s *Session) kill() {
	s.cmd.Process.Kill()
	<-s.exited
	s.data.cleanup()
}

// Stop interrupts perf record (SIGINT: it writes perf.data and exits),
// waits for it at most StepSlack, and returns the samples to Read.
func (s *Session) Stop() (*PerfData, error) {
	s.data.rec.Duration = time.Since(s.started)
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-s.exited:
		var ee *exec.ExitError
		// perf writes perf.data, then re-raises the SIGINT it was sent.
		if err != nil && !(errors.As(err, &ee) && (ee.ExitCode() == -1 || ee.ExitCode() == 130)) {
			s.data.cleanup()
			return nil, s.failed(err)
		}
	case <-time.After(StepSlack):
		s.kill()
		return nil, fmt.Errorf("perf record: did not stop within %v of SIGINT", StepSlack)
	}
	return s.data, nil
}
