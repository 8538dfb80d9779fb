package tune

import (
	"fmt"

	"redline/internal/change"
	"redline/internal/host"
)

// Sources are what a plan is composed of. When two set the same thing the
// first wins, in this order: the plans given (files, a scenario's plan),
// the doctor's fixes, the profiles.
type Sources struct {
	// Plans are plans read from files, merged in order.
	Plans []*Plan
	// Fixes are the doctor's fixes under a policy (doctor's Report.Plan),
	// with its notes (what it left out and why) and the server they are
	// for.
	Fixes      []change.Change
	FixNotes   []string
	FixRedis   string
	FixesGiven bool
	// Profiles are planned over Input, whose host snapshot Snapshot reads
	// when Input has none (only when there are profiles).
	Profiles []string
	Input    PlanInput
	Snapshot func() (*host.Snapshot, error)
}

// Compose is the one plan composer: redline tune plan, the lab's tuned
// variants and a session's plans all come from it. The plan's server is
// the first source's that names one; the caller validates after setting
// the server and the cluster's nodes.
func Compose(src Sources) (*Plan, error) {
	plan := &Plan{Version: PlanVersion}
	for _, p := range src.Plans {
		plan.Merge(p)
	}
	if src.FixesGiven {
		p := FromChanges(src.Fixes, "doctor")
		p.Notes = append(p.Notes, src.FixNotes...)
		if src.FixRedis != "" {
			p.Redis = &PlanRedis{Addr: src.FixRedis}
		}
		plan.Merge(p)
	}
	if len(src.Profiles) > 0 {
		in := src.Input
		if in.Host == nil {
			if src.Snapshot == nil {
				return nil, fmt.Errorf("profiles %v: no snapshot of the host to plan them over", src.Profiles)
			}
			snap, err := src.Snapshot()
			if err != nil {
				return nil, err
			}
			in.Host = snap
		}
		p, err := PlanProfiles(in, src.Profiles...)
		if err != nil {
			return nil, err
		}
		if in.Host.Container.Detected {
			p.Notes = append(p.Notes, fmt.Sprintf("running in a container (%s): files mounted read-only will be refused, report-only", in.Host.Container.Kind))
		}
		plan.Merge(p)
	}
	return plan, nil
}
