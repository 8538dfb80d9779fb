package tune

import (
	"context"
	"fmt"

	"redline/internal/change"
)

// kindOps is how tune acts on one change.Kind: the same steps for every
// kind, so apply, rollback, status and verify never switch on the kind.
// What a value means (validate, same, show, lostOn) is change's, not here.
type kindOps struct {
	// check says, before anything is written, whether the change can be
	// made here: a *Refusal when it cannot (report-only), another error
	// when the plan is wrong for this machine.
	check func(ctx context.Context, s *System, c change.Change) error
	// read returns the current value in a form write accepts to restore it.
	read func(ctx context.Context, s *System, c change.Change) (string, error)
	// write sets the value.
	write func(ctx context.Context, s *System, c change.Change, v string) error
	// identity, when set, records what makes the target the same object
	// later (a process's start time, a Redis server's run_id), so rollback
	// can tell a restarted target from a drifted one.
	identity func(ctx context.Context, s *System, c change.Change) (string, error)
	// aux records other values the restore needs (the paired dirty_*
	// sysctl), and restore uses them; nil means restore is write(old).
	aux     func(ctx context.Context, s *System, c change.Change) (map[string]string, error)
	restore func(ctx context.Context, s *System, c change.Change, old string, aux map[string]string) error
}

var kinds = map[change.Kind]*kindOps{}

func registerKind(k change.Kind, ops *kindOps) { kinds[k] = ops }

func opsFor(c change.Change) (*kindOps, error) {
	ops, ok := kinds[c.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown change kind %q (known: %v)", c.Kind, change.Kinds())
	}
	return ops, nil
}
