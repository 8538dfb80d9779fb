package cli

import (
	"context"

	"github.com/spf13/cobra"
)

func newTuneStatusCmd(s *streams) *cobra.Command {
	o := &tuneOptions{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what the journal holds and whether each value is still ours",
		Long: `status compares every journaled change with the live value: applied (still
what redline set), drift (someone changed it since: rollback will leave it),
gone (a reboot, a process exit or a Redis restart already undid it), intended
(journaled, but the apply stopped before writing). It changes nothing and does
not wait for a running apply. It names the guards still open: watching now,
or killed mid-window with their change unwatched (redline guard --resume).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.readsJournal(cmd)
			return runTuneStatus(cmd.Context(), s, o)
		},
	}
	o.stateFlags(cmd)
	o.remote.flags(cmd)
	cmd.Flags().BoolVar(&o.json, "json", false, "print the status as JSON")
	return cmd
}

func runTuneStatus(ctx context.Context, s *streams, o *tuneOptions) error {
	h, err := o.remote.openHost(ctx, s, "tune status", o.local())
	if err != nil {
		return err
	}
	defer closeHost(s, "tune status", h)
	rep, err := h.TuneStatus(ctx, o.password)
	if err != nil {
		return exitCode(ExitError, "redline tune status: "+err.Error())
	}
	if o.json {
		return tuneWriteJSON(s.out, rep)
	}
	printWhere(s.out, h.Info())
	tunePrintStatus(s.out, rep, o.stateDir)
	if h.Info().SSH == "" {
		guardPrintOpen(s.out, o.stateDir)
	}
	return nil
}
