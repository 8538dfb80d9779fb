package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"redline/internal/remote"
	"redline/internal/serverhost"
	"redline/internal/tune"
)

// remoteOptions are the flags that move inspect, doctor and tune to a
// server host: a `redline session` there, through the user's ssh.
type remoteOptions struct {
	target string
	noPush bool
	sudo   bool
	// config is an ssh_config of the command's own (ssh -F); heartbeat,
	// a long command's (linkFlags), is how long the session there waits
	// without a word from here before it undoes everything by itself.
	config    string
	heartbeat time.Duration
}

func (r *remoteOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.target, "ssh", "", "run on this server host through ssh: `[USER@]HOST` or a Host of your ssh config (docs/remote.md)")
	f.BoolVar(&r.noPush, "no-push", false, "with --ssh: refuse, rather than copy this redline there, when the host's redline is missing or another version")
	f.BoolVar(&r.sudo, "ssh-sudo", false, "with --ssh: run the session as root with sudo -n (the sudoers line is in docs/remote.md)")
	f.StringVar(&r.config, "ssh-config", "", "with --ssh: this ssh_config `FILE` instead of yours (ssh -F)")
}

// linkFlags adds, for a command that keeps its session for long
// (autotune, build), --ssh-heartbeat, as the lab's target has.
func (r *remoteOptions) linkFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.DurationVar(&r.heartbeat, "ssh-heartbeat", remote.DefaultHeartbeatTimeout, "with --ssh: the session there undoes what it applied and stops its servers when nothing came from here for this long")
}

// checkLink refuses the ssh flags without --ssh, and a heartbeat out of
// the session's bounds.
func (r *remoteOptions) checkLink(name string) error {
	if r.target == "" && (r.noPush || r.sudo || r.config != "") {
		return usageError("redline %s: --no-push, --ssh-sudo and --ssh-config are for --ssh HOST", name)
	}
	if h := r.heartbeat; h != 0 && (h < remote.MinHeartbeatTimeout || h > remote.MaxHeartbeatTimeout) {
		return usageError("redline %s: --ssh-heartbeat %s is not in %s..%s", name, h, remote.MinHeartbeatTimeout, remote.MaxHeartbeatTimeout)
	}
	return nil
}

// openHost opens the host command name (for messages) acts on: this
// machine as local describes it, or the --ssh server host, with its
// journal in local.StateDir there. It is the one place a command chooses
// between the two. It reports what earlier sessions' dead man's switches
// restored there.
func (r *remoteOptions) openHost(ctx context.Context, s *streams, name string, local serverhost.LocalOptions) (serverhost.Host, error) {
	o := serverhost.OpenOptions{Local: local}
	if r.target != "" {
		o.Dial = remote.DialOptions{
			SSH: remote.SSH{Target: r.target, Config: r.config}, Version: Version(), NoPush: r.noPush, Sudo: r.sudo,
			Notify: func(msg string) { fmt.Fprintf(s.err, "redline %s: %s\n", name, msg) },
		}
		if r.heartbeat != 0 {
			o.Dial.HeartbeatTimeout, o.Dial.DeadAfter = r.heartbeat, remote.DeadAfter(r.heartbeat)
		}
		if local.StateDir != tune.DefaultStateDir {
			o.Dial.StateDir = local.StateDir
		}
	}
	h, err := serverhost.Open(ctx, o)
	switch {
	case errors.Is(err, serverhost.ErrLocalOnly):
		return nil, usageError("redline %s: %v", name, err)
	case errors.Is(err, serverhost.ErrNoStateDir):
		return nil, usageError("redline %s: --state-dir %s: no such directory (nothing was applied with it)", name, local.StateDir)
	}
	if err != nil {
		return nil, exitCode(ExitError, fmt.Sprintf("redline %s: %v", name, err))
	}
	i := h.Info()
	printCleanups(s.err, name, i.Hostname, i.Cleanups)
	return h, nil
}

// printCleanups says what earlier sessions' dead man's switches on host
// restored and stopped, as the hello that opened a session reported it.
func printCleanups(w io.Writer, name, host string, cls []remote.Cleanup) {
	for _, cl := range cls {
		fmt.Fprintf(w, "redline %s: on %s an earlier session ended (%s) and restored %d apply(s), stopped %d redis-server(s)%s\n",
			name, host, cl.Reason, len(cl.Restored), len(cl.Stopped), cleanupErrors(cl))
	}
}

func cleanupErrors(c remote.Cleanup) string {
	if len(c.Errors) == 0 {
		return ""
	}
	return fmt.Sprintf("; errors: %q", c.Errors)
}

// closeHost ends a host politely (a server host's session then undoes
// what is left); the session's own switch covers the cases where this
// never runs. What its cleanup could not undo is said on stderr.
func closeHost(s *streams, name string, h serverhost.Host) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := h.Close(ctx); err != nil {
		fmt.Fprintf(s.err, "redline %s: ending %s: %v\n", name, orUnknown(h.Info().Hostname), err)
	}
}

// hangUp ends a session client politely (the bench workers' sessions).
func hangUp(c *remote.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = c.Bye(ctx)
	_ = c.Close()
}

// failed is err as command name's exit with code, unless it already is
// one (openHost's).
func failed(name string, code int, err error) error {
	var e *exitError
	if errors.As(err, &e) {
		return err
	}
	return exitCode(code, "redline "+name+": "+err.Error())
}

// printWhere heads a command's output with the server host it ran on
// ("on NAME:"); nothing for this machine.
func printWhere(w io.Writer, i serverhost.Info) {
	if where := i.Where(); where != "" {
		fmt.Fprintf(w, "%s:\n", where)
	}
}
