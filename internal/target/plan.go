package target

import (
	"fmt"
	"strings"

	"redline/internal/autotune"
	"redline/internal/change"
	"redline/internal/knobs"
	"redline/internal/serverhost"
	"redline/internal/tune"
)

// PlanYAML is plan.yaml of a confirmed session, for redline tune apply:
// each change's measured effect in its note; a cluster's Redis settings
// name each of its nodes (out.Nodes); what a plan cannot hold (start-up
// settings, profiles, steer, builds) in its notes.
func PlanYAML(out *Outcome) ([]byte, error) {
	res := out.Result
	changes, notes, err := splitPlan(res.Final)
	if err != nil {
		return nil, err
	}
	p := tune.FromChanges(changes, "autotune")
	p.Notes = append(p.Notes, notes...)
	p.Notes = append(p.Notes, buildNotes(res.Final, out.Spec.Builds)...)
	p.Redis = &tune.PlanRedis{Addr: out.Addr}
	p.ForNodes(out.Nodes)
	// Each change's note is the trial that kept its knob: found by the
	// knob, not by position (profiles and start-up settings make no
	// change here; a cluster's setting is one change per node).
	comments := map[int]string{}
	for i, ch := range p.Changes {
		if t := keptTrialOf(res, ch); t != nil {
			comments[i] = fmt.Sprintf("measured: x%.3f [%.3f, %.3f] against %s (trial %d)", t.Result.Ratio, t.Result.CILow, t.Result.CIHigh, t.Against, t.N)
		}
	}
	c := res.Confirmation.Result
	header := fmt.Sprintf("redline autotune: confirmed on %d fresh rounds: x%.3f [%.3f, %.3f] at %.0f%%\nthe server address is the session's managed one: edit redis.addr for yours", c.N, c.Ratio, c.CILow, c.CIHigh, 100*(1-c.Level))
	var buf strings.Builder
	if err := p.EncodeYAML(&buf, header, comments); err != nil {
		return nil, err
	}
	return []byte(buf.String()), nil
}

// keptTrialOf is the trial that kept the final setting making ch.
func keptTrialOf(res *autotune.Result, ch change.Change) *autotune.Trial {
	k, ok := knobs.ForChange(ch)
	for _, s := range res.Final {
		if ok && s.Knob == k.Name {
			return KeptTrial(res, s)
		}
	}
	return nil
}

// KeptTrial is the trial that kept s.
func KeptTrial(res *autotune.Result, s autotune.Setting) *autotune.Trial {
	for i := len(res.Trials) - 1; i >= 0; i-- {
		if t := &res.Trials[i]; t.Decision == autotune.Kept && t.Setting == s {
			return t
		}
	}
	return nil
}

// candidates leaves out the host knobs when the target's host cannot
// take them (no root there, a server that is not its process).
func (t *Target) candidates(cands []autotune.Candidate, untested []string) ([]autotune.Candidate, []string) {
	if t.noHost == "" {
		return cands, untested
	}
	var out []autotune.Candidate
	for _, c := range cands {
		if k, _ := knobs.Lookup(c.Knob); writesHost(k) {
			untested = append(untested, fmt.Sprintf("%s: %s", c.Knob, t.noHost))
			continue
		}
		out = append(out, c)
	}
	return out, untested
}

// onHost is " on NAME" for a server host over ssh, "" for this machine.
func onHost(i serverhost.Info) string {
	if w := i.Where(); w != "" {
		return " " + w
	}
	return ""
}
