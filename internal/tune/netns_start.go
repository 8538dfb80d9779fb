package tune

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"redline/internal/change"
)

// StartNetNS gives a network namespace redline made (the lab's netns
// target, a test's pair) a starting state of net.* sysctls, such as the
// write-ups' somaxconn 128: set inside that namespace only, so the host's
// own values are untouched, and through Apply like any change
// (allow-listed, journaled with the namespace, read back). undo rolls the
// session back; call it before the namespace is removed, or a later
// "redline tune rollback" reports the namespace gone.
func StartNetNS(ctx context.Context, ns string, sysctls map[string]string, stateDir string) (outs []Outcome, undo func(context.Context) error, err error) {
	undo = func(context.Context) error { return nil }
	if len(sysctls) == 0 {
		return nil, undo, nil
	}
	if ns == "" {
		return nil, undo, fmt.Errorf("a starting state of sysctls needs a namespace of its own (target kind netns)")
	}
	p := &Plan{Version: PlanVersion, Sources: []string{"netns starting state"}}
	for _, name := range slices.Sorted(maps.Keys(sysctls)) {
		if !strings.HasPrefix(name, "net.") {
			return nil, undo, fmt.Errorf("starting sysctl %s: only net.* sysctls belong to a network namespace (the others would change the host)", name)
		}
		p.Changes = append(p.Changes, change.Change{Kind: change.KindSysctl, Target: name, Value: sysctls[name], Why: "starting state of the namespace", Rule: "netns-start"})
	}
	if err := p.Validate(); err != nil {
		return nil, undo, err
	}
	sys := LiveSystem()
	sys.NetNS = ns
	defer sys.Close()
	res, err := Apply(ctx, sys, p, ApplyOptions{StateDir: stateDir})
	if res != nil {
		outs = res.Outcomes
		session := res.Session
		undo = func(ctx context.Context) error {
			_, err := Rollback(ctx, RollbackOptions{StateDir: stateDir, Session: session})
			return err
		}
	}
	return outs, undo, err
}
