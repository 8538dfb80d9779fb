package steer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"redline/internal/change"
	"redline/internal/tune"
)

// Actuator makes the engine's moves and undoes them.
type Actuator interface {
	// Apply writes the moves; it returns those made and read back, and
	// for the others why not (refused here, or failed).
	Apply(ctx context.Context, moves []Move) (done []Move, notDone map[int]string, err error)
	// Restore puts every IRQ it moved back where it was (leaving alone
	// any that someone else changed since).
	Restore(ctx context.Context) (string, error)
}

// JournalSource marks steer's applies in the journal (SessionInfo.Sources).
const JournalSource = "redline steer"

// TuneActuator writes through tune: each period's moves are one apply,
// journaled (old value, fsync) before the write and read back after, so
// `redline tune rollback` restores them even after kill -9.
type TuneActuator struct {
	System   *tune.System
	StateDir string
	// Irqbalance, when set, bans each IRQ from the running irqbalance
	// before its first move, and Restore lifts those bans after the
	// affinities are back.
	Irqbalance Banner
	// AtCrashPoint, in tests, is called at every point of an apply where
	// the process can die (tune.ApplyOptions.AtCrashPoint).
	AtCrashPoint func(seq int, at tune.CrashPoint)
	sessions     []string
}

// Banner keeps another IRQ balancer off the IRQs steer moves
// (IrqbalanceBan).
type Banner interface {
	Ban(irqs []int) error
	Restore() (string, error)
}

// AffinityChange is the change that puts irq on cpu.
func AffinityChange(irq, cpu int, why string) change.Change {
	c := change.IRQAffinity(irq, cpu, why)
	c.Rule = "steer"
	return c
}

// Apply implements Actuator.
func (a *TuneActuator) Apply(ctx context.Context, moves []Move) ([]Move, map[int]string, error) {
	if len(moves) == 0 {
		return nil, nil, nil
	}
	changes := make([]change.Change, len(moves))
	irqs := make([]int, len(moves))
	for i, m := range moves {
		changes[i], irqs[i] = AffinityChange(m.IRQ, m.To, m.Reason), m.IRQ
	}
	if a.Irqbalance != nil {
		a.Irqbalance.Ban(irqs) // a failure is reported by Restore; irqbalance moving an IRQ back is drift
	}
	res, err := tune.Apply(ctx, a.System, tune.FromChanges(changes, JournalSource), tune.ApplyOptions{StateDir: a.StateDir, AtCrashPoint: a.AtCrashPoint})
	if res != nil && res.Count(tune.StatusApplied) > 0 && res.Undo == nil {
		a.sessions = append(a.sessions, res.Session)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("move IRQs: %w", err)
	}
	var done []Move
	notDone := map[int]string{}
	for i, o := range res.Outcomes {
		switch o.Status {
		case tune.StatusApplied, tune.StatusUnchanged:
			done = append(done, moves[i])
		default:
			notDone[moves[i].IRQ] = fmt.Sprintf("%s: %s", o.Status, o.Reason)
		}
	}
	return done, notDone, nil
}

// Restore implements Actuator: it rolls back this process's applies,
// newest first.
func (a *TuneActuator) Restore(ctx context.Context) (string, error) {
	var errs []error
	restored, drift := 0, 0
	for _, id := range slices.Backward(a.sessions) {
		res, err := tune.Rollback(ctx, tune.RollbackOptions{StateDir: a.StateDir, System: a.System, Session: id})
		if err != nil {
			errs = append(errs, err)
		}
		if res != nil {
			restored += res.Count(tune.StatusRestored)
			drift += res.Count(tune.StatusDrift)
		}
	}
	a.sessions = nil
	msg := fmt.Sprintf("%d IRQ affinities restored, %d left alone (changed by someone else)", restored, drift)
	if a.Irqbalance != nil {
		ib, err := a.Irqbalance.Restore()
		if err != nil {
			errs = append(errs, fmt.Errorf("irqbalance: %w", err))
		}
		if ib != "" {
			msg += "; " + ib
		}
	}
	return msg, errors.Join(errs...)
}

// recoverEarlier is what every steer does before its first move: it
// rolls back what an earlier steer killed in stateDir left (RecoverLeftovers)
// and says so ("" when there was nothing), or refuses to start.
func recoverEarlier(ctx context.Context, sys *tune.System, stateDir string) (string, error) {
	n, ib, err := RecoverLeftovers(ctx, sys, stateDir)
	if err != nil {
		return "", fmt.Errorf("restoring what an earlier steer left in %s: %w (then run redline tune rollback --state-dir %s)", stateDir, err, stateDir)
	}
	if n == 0 && ib == "" {
		return "", nil
	}
	return fmt.Sprintf("rolled back %d apply(s) an earlier steer left in %s; %s", n, stateDir, cmp.Or(ib, "no irqbalance bans to lift")), nil
}

// RecoverLeftovers rolls back what an earlier steer left in the journal
// (it was killed before it could restore), newest first, then lifts the
// irqbalance bans it left. It returns how many sessions it rolled back
// and what it did about irqbalance ("" for nothing).
func RecoverLeftovers(ctx context.Context, sys *tune.System, stateDir string) (int, string, error) {
	rep, err := tune.Journaled(ctx, tune.StatusOptions{StateDir: stateDir, System: sys})
	if err != nil {
		return 0, "", err
	}
	n := 0
	var errs []error
	for _, s := range slices.Backward(rep.Sessions) {
		if !slices.Contains(s.Info.Sources, JournalSource) {
			continue
		}
		if _, err := tune.Rollback(ctx, tune.RollbackOptions{StateDir: stateDir, System: sys, Session: s.ID}); err != nil {
			errs = append(errs, err)
		}
		n++
	}
	// After the affinities are back: lifted first, irqbalance could move
	// an IRQ before its rollback, which would then leave it alone.
	ib, err := RecoverIrqbalance(stateDir)
	if err != nil {
		errs = append(errs, fmt.Errorf("irqbalance bans: %w", err))
	}
	return n, ib, errors.Join(errs...)
}
