package doctor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"redline/internal/change"
	"redline/internal/host"
)

// PlanOptions is what a caller chooses when it turns a report into
// changes; everything else about the policy is fixed in Report.Plan.
type PlanOptions struct {
	// MinSeverity leaves out fired findings below it.
	MinSeverity Severity
	// Cautions takes the changes of fixes that carry a Caution (weaker
	// durability, more power, a write-up value the kernel documentation
	// contradicts), with the caution as a note. Without it they are left
	// out, and a note says so.
	Cautions bool
	// Kinds, when not empty, are the only kinds of change taken; a change
	// of another kind is left out with a note.
	Kinds []change.Kind
}

// ReviewedPlan is the policy for a plan a person reads before applying
// it (redline tune plan): findings at or above min, cautioned fixes
// included with their caution in the notes, every kind of change.
func ReviewedPlan(min Severity) PlanOptions {
	return PlanOptions{MinSeverity: min, Cautions: true}
}

// UnattendedPlan is the policy for changes applied without anyone reading
// them first (the lab's "doctor" variant): medium severity and above, no
// cautioned fix, and only sysctls, kernel files and Redis settings:
// nothing that stops a service, moves threads or re-creates NIC queues.
var UnattendedPlan = PlanOptions{
	MinSeverity: Medium,
	Kinds:       []change.Kind{change.KindSysctl, change.KindFile, change.KindRedisConfig},
}

// Plan is what a report proposes under some PlanOptions.
type Plan struct {
	Changes []change.Change
	// Notes are the cautions, the advice that cannot be automated, and
	// what was left out and why, each prefixed with its finding's ID.
	Notes []string
	// Redis is the server the redis-config changes are for (the report's
	// target; in a cluster the seed, and each change names its node);
	// empty when there are none.
	Redis string
}

// Plan turns the fixes of r's fired findings into changes, under one
// policy for every caller:
//
//   - findings fired at or above o.MinSeverity, most severe first;
//   - each change carries its finding's ID as Rule;
//   - a fix with a Caution is taken only with o.Cautions;
//   - only the kinds in o.Kinds, when set;
//   - one change per target (change.Key): the more severe finding wins,
//     and the one dropped is noted;
//   - in a cluster, each node's Redis settings go to that node (the
//     change names it: change.Change.Node), and a host change found on
//     several nodes is taken once.
func (r *Report) Plan(o PlanOptions) Plan {
	var p Plan
	seen := map[string]bool{}
	fired := r.Fired(o.MinSeverity)
	slices.SortStableFunc(fired, func(a, b Finding) int { return int(b.Severity) - int(a.Severity) })
	for _, f := range fired {
		if f.Fix == nil {
			continue
		}
		cautioned := f.Fix.Caution != "" && len(f.Fix.Changes) > 0
		if cautioned && !o.Cautions {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: left out (caution: %s)", f.ID, f.Fix.Caution))
		} else {
			p.take(f, o, seen)
		}
		if cautioned && o.Cautions {
			p.Notes = append(p.Notes, f.ID+": "+f.Fix.Caution)
		}
		if len(f.Fix.Changes) > 0 && oneSample(f) {
			p.Notes = append(p.Notes, f.ID+": "+OneSampleNote)
		}
		for _, a := range f.Fix.Advice {
			p.Notes = append(p.Notes, f.ID+": "+a)
		}
	}
	for _, c := range p.Changes {
		if c.Kind == change.KindRedisConfig {
			p.Redis = r.Target.Redis
		}
	}
	return p
}

// OneSampleNote marks a change planned from a counter read once: its
// total since boot (or since the server started) may be old history.
const OneSampleNote = "judged from one sample of a counter (its total since boot): run redline doctor --sample 10s to see whether it still rises before applying this"

// oneSample reports whether f judged a counter's total rather than its
// rise over a --sample window (Facts.Since, HostDelta and InfoDelta say so
// in the message or the evidence).
func oneSample(f Finding) bool {
	marks := []string{"since boot", "since the server started"}
	has := func(s string) bool {
		return slices.ContainsFunc(marks, func(m string) bool { return strings.Contains(s, m) })
	}
	return has(f.Message) || slices.ContainsFunc(f.Evidence, func(e Evidence) bool { return has(e.Note) })
}

// take adds f's changes that o allows and no earlier finding set. A Redis
// setting of a cluster node's finding goes to that node.
func (p *Plan) take(f Finding, o PlanOptions, seen map[string]bool) {
	for _, c := range f.Fix.Changes {
		if c.Rule == "" {
			c.Rule = f.ID
		}
		if c.Kind == change.KindRedisConfig && f.Node != "" {
			c.Node = f.Node
		}
		switch {
		case len(o.Kinds) > 0 && !slices.Contains(o.Kinds, c.Kind):
			p.Notes = append(p.Notes, fmt.Sprintf("%s from %s left out: %s changes are not taken here", c.Key(), c.Rule, c.Kind))
		case seen[c.Key()]:
			p.Notes = append(p.Notes, fmt.Sprintf("%s from %s dropped: another finding already sets it", c.Key(), c.Rule))
		default:
			seen[c.Key()] = true
			p.Changes = append(p.Changes, c)
		}
	}
}

// IsReportJSON reports whether b looks like a `redline doctor --json`
// report rather than a plan or a list of changes.
func IsReportJSON(b []byte) bool {
	t := bytes.TrimSpace(b)
	return bytes.HasPrefix(t, []byte("{")) && bytes.Contains(t, []byte(`"findings"`))
}

// ReadReport reads a report written by WriteJSON. Fields it does not know
// are ignored, so a report from a newer redline with the same schema
// still reads.
func ReadReport(rd io.Reader) (*Report, error) {
	var doc struct {
		Schema     int                `json:"schema"`
		Target     Target             `json:"target"`
		ReadErrors []host.SourceError `json:"read_errors"`
		Nodes      []Node             `json:"nodes"`
		Findings   []Finding          `json:"findings"`
	}
	if err := json.NewDecoder(rd).Decode(&doc); err != nil {
		return nil, fmt.Errorf("not a redline doctor --json report: %w", err)
	}
	if doc.Schema > SchemaVersion {
		return nil, fmt.Errorf("doctor report schema %d: this redline reads schema %d (upgrade redline)", doc.Schema, SchemaVersion)
	}
	return &Report{Target: doc.Target, Findings: doc.Findings, ReadErrors: doc.ReadErrors, Nodes: doc.Nodes}, nil
}
