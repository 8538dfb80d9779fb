package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"redline/internal/serverhost"
	"redline/internal/tune"
)

type tuneRollbackOptions struct {
	tuneOptions
	last, dryRun bool
	session      string
}

func newTuneRollbackCmd(s *streams) *cobra.Command {
	o := &tuneRollbackOptions{}
	cmd := &cobra.Command{
		Use:   "rollback",
		Short: "Restore journaled changes, newest first; leave and report values changed since",
		Long: `rollback reads the journal and restores each change's old value, newest first,
reading each back. A value someone changed since redline set it is left alone
and reported (drift); one a reboot, process exit or Redis restart already undid
is reported as gone. It works after redline was killed and after a reboot. The
machine (live or a rehearsal --root) comes from the journal. While a running
lab, steer or autotune holds the state directory it refuses: that redline
rolls back its own changes when it ends.

Exit status: 0 when nothing is left to restore, 1 when some values could not be
restored (they stay journaled: run rollback again), 2 when it could not run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.readsJournal(cmd)
			return runTuneRollback(cmd.Context(), s, o)
		},
	}
	o.stateFlags(cmd)
	o.remote.flags(cmd)
	cmd.Flags().BoolVar(&o.last, "last", false, "roll back only the most recent apply")
	cmd.Flags().StringVar(&o.session, "session", "", "roll back only this apply (its id, as apply and status print it)")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "show what would be restored and stop")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	return cmd
}

func runTuneRollback(ctx context.Context, s *streams, o *tuneRollbackOptions) error {
	h, err := o.remote.openHost(ctx, s, "tune rollback", o.local())
	if err != nil {
		return err
	}
	defer closeHost(s, "tune rollback", h)
	res, err := h.TuneRollback(ctx, serverhost.TuneRollbackArgs{Session: o.session, Last: o.last, DryRun: o.dryRun, RedisPassword: o.password, Exclusive: true})
	if res == nil {
		return exitCode(ExitError, "redline tune rollback: "+err.Error())
	}
	if o.json {
		if jerr := tuneWriteJSON(s.out, res); jerr != nil {
			return jerr
		}
	} else {
		printWhere(s.out, h.Info())
		for _, oc := range res.Outcomes {
			tunePrintOutcome(s.out, oc)
		}
		tunePrintRollbackSummary(s.out, res, o.dryRun)
	}
	if err != nil {
		return exitCode(ExitFailure, "redline tune rollback: "+err.Error())
	}
	return nil
}

func tunePrintRollbackSummary(w io.Writer, res *tune.RollbackResult, dry bool) {
	if len(res.Outcomes) == 0 {
		fmt.Fprintln(w, "nothing to roll back")
		return
	}
	fmt.Fprintf(w, "\nrestored %d, left alone (drift) %d, already undone (gone) %d, failed %d\n",
		res.Count(tune.StatusRestored), res.Count(tune.StatusDrift), res.Count(tune.StatusGone), res.Count(tune.StatusRestoreFailed))
	switch {
	case dry:
		fmt.Fprintln(w, "dry run: nothing was written")
	case res.Archived:
		fmt.Fprintln(w, "the journal is complete and moved to history/")
	}
}
