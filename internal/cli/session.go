package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"redline/internal/remote"
	"redline/internal/serverhost"
	"redline/internal/tune"
)

func init() { register(newSessionCmd) }

// newSessionCmd is the server-host side of --ssh and of the lab's ssh
// target: the session protocol on stdin and stdout (docs/remote.md). It is
// hidden: people do not type it, ssh does.
func newSessionCmd(s *streams) *cobra.Command {
	var stateDir string
	var worker bool
	cmd := &cobra.Command{
		Use:    "session",
		Short:  "Serve a redline client over stdin/stdout (started through ssh; see docs/remote.md)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSession(cmd.Context(), s, stateDir, worker)
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", tune.DefaultStateDir, "directory of the journal")
	// Started by bench --workers N over pipes, never through ssh (the
	// sudoers line allows no arguments): serverhost.ServeWorker.
	cmd.Flags().BoolVar(&worker, "worker", false, "a local bench worker of the redline that started it: load only, no state directory")
	cmd.Flags().MarkHidden("worker")
	return cmd
}

func runSession(ctx context.Context, s *streams, stateDir string, worker bool) error {
	// A write to a closed stdout must be an error to handle, not the
	// SIGPIPE death that would skip the rollback.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGHUP, syscall.SIGTERM, os.Interrupt)
	defer stop()
	var c *remote.Cleanup
	if worker { // no server-host API: the bench operations only; its stderr is read for errors only
		c = serverhost.ServeWorker(ctx, s.in, s.out, Version())
	} else {
		c = serverhost.Serve(ctx, s.in, s.out, serverhost.ServeOptions{Version: Version(), StateDir: stateDir, Log: s.err})
	}
	if len(c.Errors) > 0 {
		return exitCode(ExitFailure, "redline session: "+errors.Join(stringErrors(c.Errors)...).Error())
	}
	return nil
}

func stringErrors(msgs []string) []error {
	errs := make([]error, len(msgs))
	for i, m := range msgs {
		errs[i] = errors.New(m)
	}
	return errs
}
