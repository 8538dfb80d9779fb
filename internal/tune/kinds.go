package tune

import (
	"context"
	"fmt"
	"slices"
)

// kindOps is how tune handles one Kind: the same six steps for every kind,
// so apply, rollback, status and verify never switch on the kind.
type kindOps struct {
	// validate checks a change's target and value without touching the
	// machine.
	validate func(c Change) error
	// check says, before anything is written, whether the change can be
	// made here: a *Refusal when it cannot (report-only), another error
	// when the plan is wrong for this machine.
	check func(ctx context.Context, s *System, c Change) error
	// read returns the current value in a form write accepts to restore it.
	read func(ctx context.Context, s *System, c Change) (string, error)
	// write sets the value.
	write func(ctx context.Context, s *System, c Change, v string) error
	// same compares two values in their normal form ("0-1" and "0,1";
	// "1024\t65535" and "1024 65535"; "always [madvise] never" and
	// "madvise").
	same func(c Change, a, b string) bool
	// identity, when set, records what makes the target the same object
	// later (a process's start time, a Redis server's run_id), so rollback
	// can tell a restarted target from a drifted one.
	identity func(ctx context.Context, s *System, c Change) (string, error)
	// aux records other values the restore needs (the paired dirty_*
	// sysctl), and restore uses them; nil means restore is write(old).
	aux     func(ctx context.Context, s *System, c Change) (map[string]string, error)
	restore func(ctx context.Context, s *System, c Change, old string, aux map[string]string) error
	// show formats a value for people (masks also as CPU lists).
	show func(c Change, v string) string
	// lostOn names what undoes the change without redline.
	lostOn string
}

var kinds = map[Kind]*kindOps{}

func registerKind(k Kind, ops *kindOps) {
	if ops.show == nil {
		ops.show = func(_ Change, v string) string { return v }
	}
	kinds[k] = ops
}

// Kinds lists the kinds tune can apply, sorted.
func Kinds() []Kind {
	out := make([]Kind, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func opsFor(c Change) (*kindOps, error) {
	ops, ok := kinds[c.Kind]
	if !ok {
		return nil, fmt.Errorf("unknown change kind %q (known: %v)", c.Kind, Kinds())
	}
	return ops, nil
}

// Validate checks c's kind, target and value without touching the machine.
func (c Change) Validate() error {
	ops, err := opsFor(c)
	if err != nil {
		return err
	}
	if err := ops.validate(c); err != nil {
		return fmt.Errorf("%s %s: %w", c.Kind, c.Target, err)
	}
	return nil
}

// Key identifies what c writes; two changes with the same key in one plan
// would fight.
func (c Change) Key() string { return string(c.Kind) + " " + c.Target }

// String is the change as one line: "sysctl net.core.somaxconn = 8192".
func (c Change) String() string { return fmt.Sprintf("%s %s = %s", c.Kind, c.Target, c.Value) }

// LostOn says what undoes c without redline: "reboot", "Redis restart",
// "process exit".
func (c Change) LostOn() string {
	if ops, ok := kinds[c.Kind]; ok {
		return ops.lostOn
	}
	return ""
}

// Same reports whether two values of c's target are equal in normal form.
func (c Change) Same(a, b string) bool {
	ops, err := opsFor(c)
	if err != nil {
		return a == b
	}
	return ops.same(c, a, b)
}

// Show formats a value of c's target for people.
func (c Change) Show(v string) string {
	ops, err := opsFor(c)
	if err != nil {
		return v
	}
	return ops.show(c, v)
}
