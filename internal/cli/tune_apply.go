package cli

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"redline/internal/guard"
	"redline/internal/serverhost"
	"redline/internal/tune"
)

type tuneApplyOptions struct {
	tuneOptions
	guard       guardOptions
	yes, dryRun bool
	// persist adds the plan's persistence (tune persist, apply --persist);
	// boot is the boot unit's apply (--boot).
	persist, boot bool
}

func newTuneApplyCmd(s *streams) *cobra.Command {
	o := &tuneApplyOptions{}
	cmd := &cobra.Command{
		Use:   "apply PLAN --yes",
		Short: "Apply a plan behind the journal; any failure rolls back what was applied",
		Long: `apply makes the plan's changes in order. Before each write the old value is
journaled and fsynced; after it the value is read back. A change that cannot be
made here (not root, a read-only /proc/sys in a container, a missing file, an IRQ
the kernel will not move) is refused and reported, and the rest go ahead. Any
other failure rolls back everything this apply changed.

Without --yes it shows the plan and changes nothing; --dry-run does the same
without complaining. Exit status: 0 when every change is in place, 1 when one
failed (and was rolled back) or was refused, 2 when apply could not run.

With --guard the server is watched for --guard-baseline before the change and
--guard-window after it (a probe and INFO, compared by stated rules,
docs/guard.md); a rule that trips rolls the change back at once and the exit
status is 1. The guard needs the server: --redis, -p or the plan's redis.addr.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTuneApply(cmd.Context(), s, o, args[0])
		},
	}
	o.applyFlags(cmd)
	cmd.Flags().BoolVar(&o.persist, "persist", false, "also make the plan survive a reboot (as redline tune persist; rollback removes it too)")
	cmd.Flags().BoolVar(&o.boot, "boot", false, "the boot unit's apply: no --yes needed, and changes this boot cannot make (a NIC gone) are reported, not failed")
	cmd.Flags().BoolVar(&o.guard.on, "guard", false, "watch the server before and after the change and roll it back when it hurts (docs/guard.md)")
	o.guard.flags(cmd, guard.DefaultWindow)
	return cmd
}

// applyFlags are the flags of every command that applies a plan (tune
// apply, tune persist).
func (o *tuneApplyOptions) applyFlags(cmd *cobra.Command) {
	o.stateFlags(cmd)
	o.remote.flags(cmd)
	o.hostFlags(cmd)
	cmd.Flags().BoolVar(&o.yes, "yes", false, "really apply")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "show what would change and stop")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the result as JSON")
}

func runTuneApply(ctx context.Context, s *streams, o *tuneApplyOptions, path string) error {
	if err := o.checkRoot(); err != nil {
		return err
	}
	if o.guard.on {
		if err := o.guard.check("tune apply"); err != nil {
			return err
		}
		if o.json {
			return usageError("redline tune apply: --guard prints its verdict as text; leave out --json")
		}
	}
	p, err := tune.ReadPlanFile(path)
	if err != nil {
		return exitCode(ExitError, "redline tune apply: "+err.Error())
	}
	if o.boot {
		o.yes = true
	}
	if o.persist {
		if p, err = withPersistence(s, o, p); err != nil {
			return err
		}
	}
	h, err := o.remote.openHost(ctx, s, "tune apply", o.local())
	if err != nil {
		return err
	}
	defer closeHost(s, "tune apply", h)
	hi := h.Info()
	if p.Host != "" && hi.Hostname != "" && p.Host != hi.Hostname {
		fmt.Fprintf(s.err, "redline tune apply: warning: the plan was made on %s, this is %s; its values were read there\n", p.Host, hi.Hostname)
	}
	redis := o.redisFor(p, s.err)
	previews, warnings, err := h.TunePreview(ctx, p, redis)
	if err != nil {
		return exitCode(ExitError, "redline tune apply: "+err.Error())
	}
	if o.dryRun || !o.yes {
		tunePrintPreview(s.out, p, previews, warnings)
		if o.dryRun {
			return nil
		}
		return exitCode(ExitError, "redline tune apply: nothing changed: add --yes to apply this plan")
	}
	for _, w := range warnings {
		fmt.Fprintln(s.err, "redline tune apply: WARNING:", w)
	}
	if o.guard.on {
		return runGuarded(ctx, s, "tune apply", &o.tuneOptions, &o.guard, h, p, path)
	}
	res, err := h.TuneApply(ctx, p, redis, serverhost.Kept)
	if res == nil {
		return tuneApplyExit(s, o, res, err)
	}
	if o.json {
		if jerr := tuneWriteJSON(s.out, res); jerr != nil {
			return jerr
		}
	} else {
		printWhere(s.out, hi)
		for _, oc := range res.Outcomes {
			tunePrintOutcome(s.out, oc)
		}
	}
	return tuneApplyExit(s, o, res, err)
}

func tuneApplyExit(s *streams, o *tuneApplyOptions, res *tune.ApplyResult, err error) error {
	if res == nil {
		return exitCode(ExitError, "redline tune apply: "+err.Error())
	}
	if !o.json && res.Undo != nil {
		fmt.Fprintln(s.out, "rolled back after the failure:")
		for _, out := range res.Undo.Outcomes {
			tunePrintOutcome(s.out, out)
		}
	}
	if err != nil {
		return exitCode(ExitFailure, "redline tune apply: "+err.Error())
	}
	applied, refused := res.Count(tune.StatusApplied), res.Count(tune.StatusRefused)
	if !o.json {
		fmt.Fprintf(s.out, "\napplied %d, already in place %d, refused %d (journal %s, session %s)\n",
			applied, res.Count(tune.StatusUnchanged), refused, o.stateDir, res.Session)
		if applied > 0 {
			fmt.Fprintln(s.out, tuneVolatility(res.Outcomes, o.persist))
			fmt.Fprintln(s.out, "undo with: redline tune rollback"+tuneStateDirFlag(o.stateDir))
		}
	}
	if refused > 0 && !o.boot {
		return exitCode(ExitFailure, fmt.Sprintf("redline tune apply: %d change(s) refused here (report-only; reasons above)", refused))
	}
	return nil
}

// tuneVolatility says what undoes the applied changes without redline:
// nothing is persisted, unless persisted (--persist, tune persist).
func tuneVolatility(outs []tune.Outcome, persisted bool) string {
	if persisted {
		return "persisted: they come back after a reboot (tune verify says which); tune rollback removes the persistence too"
	}
	byCause := map[string]int{}
	var causes []string
	for _, o := range outs {
		if o.Status != tune.StatusApplied {
			continue
		}
		cause := o.Change.LostOn()
		if byCause[cause] == 0 {
			causes = append(causes, cause)
		}
		byCause[cause]++
	}
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = fmt.Sprintf("%d on %s", byCause[c], c)
	}
	return "nothing was persisted: lost " + strings.Join(parts, ", ")
}

func tuneStateDirFlag(dir string) string {
	if dir == tune.DefaultStateDir {
		return ""
	}
	return " --state-dir " + dir
}

// withPersistence adds the plan's persistence files (and CONFIG REWRITE)
// to p, saying what does not persist.
func withPersistence(s *streams, o *tuneApplyOptions, p *tune.Plan) (*tune.Plan, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, exitCode(ExitError, "redline tune persist: where is redline? "+err.Error())
	}
	per, err := tune.Persist(p, tune.PersistOptions{Binary: bin, StateDir: o.stateDir})
	if err != nil {
		return nil, exitCode(ExitError, "redline tune persist: "+err.Error())
	}
	for _, sk := range per.Skipped {
		fmt.Fprintln(s.err, "redline tune persist: not persisted:", sk)
	}
	if per.Rewrite && (p.Redis == nil || p.Redis.Addr == "") {
		fmt.Fprintln(s.err, "redline tune persist: not persisted: the Redis settings (CONFIG REWRITE needs the plan's redis.addr)")
	}
	return tune.WithPersistence(p, per), nil
}
