package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"redline/internal/tune"
)

func newTuneVerifyCmd(s *streams) *cobra.Command {
	o := &tuneOptions{}
	cmd := &cobra.Command{
		Use:   "verify [PLAN]",
		Short: "Check that the live values are the planned or journaled ones",
		Long: `verify with a PLAN compares every change's live value with the plan's; without
one it checks every journaled change is still in place. Exit status 0 when they
all are, 1 when not (the differences are printed), 2 when it could not check.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 { // verifying the journal: a mistyped --state-dir is not "nothing applied"
				o.readsJournal(cmd)
			}
			return runTuneVerify(cmd.Context(), s, o, args)
		},
	}
	o.stateFlags(cmd)
	o.hostFlags(cmd)
	o.remote.flags(cmd)
	cmd.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
	return cmd
}

func runTuneVerify(ctx context.Context, s *streams, o *tuneOptions, args []string) error {
	if err := o.checkRoot(); err != nil {
		return err
	}
	var p *tune.Plan
	if len(args) == 1 {
		var err error
		if p, err = tune.ReadPlanFile(args[0]); err != nil {
			return exitCode(ExitError, "redline tune verify: "+err.Error())
		}
	}
	h, err := o.remote.openHost(ctx, s, "tune verify", o.local())
	if err != nil {
		return err
	}
	defer closeHost(s, "tune verify", h)
	if !o.json {
		printWhere(s.out, h.Info())
	}
	if p == nil {
		rep, err := h.TuneStatus(ctx, o.password)
		if err != nil {
			return exitCode(ExitError, "redline tune verify: "+err.Error())
		}
		return tuneVerifyJournal(s, o, rep)
	}
	outs, err := h.TuneVerify(ctx, p, o.redisFor(p, s.err))
	if err != nil {
		return exitCode(ExitError, "redline tune verify: "+err.Error())
	}
	return tuneVerifyOutcomes(s, o, outs)
}

// tuneVerifyJournal prints where the journaled changes stand and fails
// unless every one is in place.
func tuneVerifyJournal(s *streams, o *tuneOptions, rep *tune.StatusReport) error {
	if o.json {
		if err := tuneWriteJSON(s.out, rep); err != nil {
			return err
		}
	} else {
		tunePrintStatus(s.out, rep, o.stateDir)
	}
	total, in, unread := 0, 0, 0
	for _, sess := range rep.Sessions {
		for _, c := range sess.Changes {
			total++
			switch c.Status {
			case tune.StatusApplied:
				in++
			case tune.StatusUnknown:
				unread++
			}
		}
	}
	if !o.json {
		tunePrintAfterReboot(s.out, rep)
		fmt.Fprintln(s.out, verifySummary("journal", in, unread, total))
	}
	if !rep.Clean() {
		return exitCode(ExitFailure, "redline tune verify: some journaled changes are no longer in place")
	}
	return nil
}

// verifySummary is verify's last line: whether the host matches what it
// was compared with, and how many changes are in place.
func verifySummary(against string, in, unread, total int) string {
	switch {
	case in == total:
		return fmt.Sprintf("the host matches the %s: all %d changes in place", against, total)
	case in+unread == total:
		return fmt.Sprintf("the host could not be compared with the %s: %d of %d changes could not be read now (not a change: see why under each)", against, unread, total)
	case unread > 0:
		return fmt.Sprintf("the host does not match the %s: %d of %d changes not in place, %d more could not be read now", against, total-in-unread, total, unread)
	}
	return fmt.Sprintf("the host does not match the %s: %d of %d changes not in place", against, total-in, total)
}

// tuneVerifyOutcomes prints a plan's verification and fails unless every
// change is in place.
func tuneVerifyOutcomes(s *streams, o *tuneOptions, outs []tune.Outcome) error {
	if o.json {
		if err := tuneWriteJSON(s.out, outs); err != nil {
			return err
		}
	} else {
		for _, out := range outs {
			tunePrintOutcome(s.out, out)
		}
	}
	bad, unread := 0, 0
	for _, out := range outs {
		if out.Status != tune.StatusOK {
			bad++
		}
		if out.Status == tune.StatusUnknown {
			unread++
		}
	}
	if !o.json {
		fmt.Fprintln(s.out, verifySummary("plan", len(outs)-bad, unread, len(outs)))
	}
	if bad > 0 {
		return exitCode(ExitFailure, fmt.Sprintf("redline tune verify: %d of %d changes are not in place", bad, len(outs)))
	}
	return nil
}

// tunePrintAfterReboot says which of the changes in place a reboot
// brings back (tune persist) and which it loses.
func tunePrintAfterReboot(w io.Writer, rep *tune.StatusReport) {
	back, lost := tune.AfterReboot(rep)
	if len(back)+len(lost) == 0 {
		return
	}
	fmt.Fprintf(w, "after a reboot: %d of %d changes in place would come back (redline tune persist)", len(back), len(back)+len(lost))
	if len(lost) == 0 {
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintln(w, "; these would not:")
	for _, l := range lost {
		fmt.Fprintf(w, "  %s %s (lost on %s)\n", l.Change.Kind, l.Change.Target, l.LostOn)
	}
}
