package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"redline/internal/remote"
	"redline/internal/tune"
)

// remoteOptions are the flags that move inspect, doctor and tune to a
// server host: a `redline session` there, through the user's ssh.
type remoteOptions struct {
	target string
	noPush bool
	sudo   bool
}

func (r *remoteOptions) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.target, "ssh", "", "run on this server host through ssh: `[USER@]HOST` or a Host of your ssh config (docs/remote.md)")
	f.BoolVar(&r.noPush, "no-push", false, "with --ssh: refuse, rather than copy this redline there, when the host's redline is missing or another version")
	f.BoolVar(&r.sudo, "ssh-sudo", false, "with --ssh: run the session as root with sudo -n (the sudoers line is in docs/remote.md)")
}

// set reports whether the command runs remotely.
func (r *remoteOptions) set() bool { return r.target != "" }

// dial opens a session on the server host for command name (for
// messages), with its journal in stateDir there, and reports what earlier
// sessions' dead man's switches restored.
func (r *remoteOptions) dial(ctx context.Context, s *streams, name, stateDir string) (*remote.Client, error) {
	o := remote.DialOptions{
		SSH: remote.SSH{Target: r.target}, Version: Version(), NoPush: r.noPush, Sudo: r.sudo,
		Notify: func(msg string) { fmt.Fprintf(s.err, "redline %s: %s\n", name, msg) },
	}
	if stateDir != tune.DefaultStateDir {
		o.StateDir = stateDir
	}
	c, err := remote.Dial(ctx, o)
	if err != nil {
		return nil, exitCode(ExitError, fmt.Sprintf("redline %s: %v", name, err))
	}
	for _, cl := range c.Hello.Cleanups {
		fmt.Fprintf(s.err, "redline %s: on %s an earlier session ended (%s) and restored %d apply(s), stopped %d redis-server(s)%s\n",
			name, c.Hello.Hostname, cl.Reason, len(cl.Restored), len(cl.Stopped), cleanupErrors(cl))
	}
	return c, nil
}

func cleanupErrors(c remote.Cleanup) string {
	if len(c.Errors) == 0 {
		return ""
	}
	return fmt.Sprintf("; errors: %q", c.Errors)
}

// hangUp ends a session politely; the session's own switch covers the
// cases where this never runs.
func hangUp(c *remote.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = c.Bye(ctx)
	_ = c.Close()
}
