package remote

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// LocalOptions say how to start a local worker session (LocalWorker).
type LocalOptions struct {
	// Version is this redline's version; the session's must match.
	Version string
	// Binary is the redline to run (this executable when empty).
	Binary string
	// HeartbeatTimeout is how long the session waits for the client
	// before it stops its worker by itself; DefaultHeartbeatTimeout when
	// zero.
	HeartbeatTimeout time.Duration
	// DeadAfter is the client's (Client.DeadAfter): a session silent for
	// this long (a stopped process) is killed and its calls fail.
	DeadAfter time.Duration
}

// LocalWorker starts `redline session --worker` on this host over pipes:
// a session without ssh that runs one share of a bench --workers run (the
// bench operations only, SessionOptions.Worker), spoken to exactly as a
// session on a worker host is. Its stderr (only its errors: a worker
// session logs nothing else) is kept for messages.
//
// The session is in a process group of its own, so a terminal's Ctrl-C
// reaches only this redline, which stops the worker through the protocol
// and gets what it measured. Its dead man's switch does the rest, as over
// ssh: the end of its input (this redline gone, even killed -9: the pipe
// is this process's alone), SIGTERM, or no heartbeat for the timeout (a
// stopped redline) ends the session, which stops its worker. No
// Pdeathsig: the kernel sends it when the forking thread ends, not the
// process, and Go ends threads (redisserver.spawn), which would kill a
// healthy worker mid-run. A session that ends while a call waits (killed)
// fails the call saying how it ended.
func LocalWorker(ctx context.Context, o LocalOptions) (*Client, error) {
	exe := o.Binary
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("find this redline's binary: %w", err)
		}
	}
	cmd := exec.Command(exe, "session", "--worker")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return startSession(ctx, cmd, sessionStart{
		version: o.Version, heartbeat: o.HeartbeatTimeout, deadAfter: o.DeadAfter, where: "this host",
		startErr: func(err error) error { return fmt.Errorf("start %s session --worker: %w", exe, err) },
		helloErr: func(err error, stderr string) error {
			return fmt.Errorf("%s session --worker: %w%s", exe, err, lastLine(stderr))
		},
		exitErr: func(st *os.ProcessState, stderr string) error {
			if st == nil || st.Success() {
				return nil
			}
			if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				return fmt.Errorf("%w: its process %d was killed by signal %d (%s)", ErrClosed, st.Pid(), int(ws.Signal()), ws.Signal())
			}
			return fmt.Errorf("%w: its process %d exited with status %d%s", ErrClosed, st.Pid(), st.ExitCode(), lastLine(stderr))
		},
	})
}

// lastLine is the last line of a process's stderr, as ": line", or "".
func lastLine(stderr string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return ": " + l
	}
	return ""
}
