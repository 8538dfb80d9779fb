package target

import (
	"context"
	"fmt"
	"slices"

	"redline/internal/autotune"
	"redline/internal/doctor"
	"redline/internal/knobs"
	"redline/internal/serverhost"
	"redline/internal/textsafe"
)

// doctorFirst runs the doctor on the target before the session: a fired
// finding whose fix is a change some catalog knob makes (knobs.ForChange)
// puts that knob first in the screening order, the fix's value first
// among its values; a fix no knob makes, or only advice, is listed as
// untested with its finding. lines say, for the output, which knobs the
// doctor put first and why.
func (t *Target) doctorFirst(ctx context.Context, cands []autotune.Candidate, untested []string) (_ []autotune.Candidate, _ []string, lines []string) {
	rep, err := t.host.Doctor(ctx, serverhost.DoctorArgs{Pid: t.base().pid, Redis: t.redis})
	if err != nil {
		return cands, untested, []string{textsafe.Printable("not run: " + err.Error())}
	}
	var first []autotune.Candidate
	for _, f := range rep.Fired(doctor.Info) {
		// A finding's message quotes the server (LATENCY event names, a
		// CONFIG value): escaped once here, it is printed and journaled
		// as it is.
		f.Message = textsafe.Printable(f.Message)
		rule := textsafe.Printable(doctorRule(f))
		switch {
		case f.Fix == nil:
			continue
		case len(f.Fix.Changes) == 0 && len(f.Fix.Advice) > 0:
			untested = append(untested, fmt.Sprintf("%s (%s): advice, no change to try: %s", rule, f.Message, textsafe.Printable(f.Fix.Advice[0])))
			continue
		}
		for _, ch := range f.Fix.Changes {
			k, ok := knobs.ForChange(ch)
			if !ok {
				untested = append(untested, fmt.Sprintf("%s (%s): fix %s: no knob in the catalog makes it", rule, f.Message, textsafe.Printable(ch.String())))
				continue
			}
			c, rest, ok := takeCandidate(k.Name, cands, first)
			if !ok {
				untested = append(untested, fmt.Sprintf("%s (%s): fix %s: knob %s is not among this session's candidates", rule, f.Message, ch, k.Name))
				continue
			}
			cands = rest
			c.Values = append([]string{ch.Value}, slices.DeleteFunc(c.Values, func(v string) bool { return v == ch.Value })...)
			first = upsert(first, c)
			lines = append(lines, fmt.Sprintf("%s = %s screened first (from %s: %s)", k.Name, ch.Value, rule, f.Message))
		}
	}
	return append(first, cands...), untested, lines
}

// doctorRule names f's rule, and on a cluster the node it judged (a
// trial's Redis settings go to every node).
func doctorRule(f doctor.Finding) string {
	if f.Node != "" {
		return "doctor rule " + f.ID + " on node " + f.Node
	}
	return "doctor rule " + f.ID
}

// takeCandidate finds knob among the doctor's candidates so far, or
// takes it out of cands.
func takeCandidate(knob string, cands, first []autotune.Candidate) (autotune.Candidate, []autotune.Candidate, bool) {
	is := func(c autotune.Candidate) bool { return c.Knob == knob }
	if i := slices.IndexFunc(first, is); i >= 0 {
		return first[i], cands, true
	}
	i := slices.IndexFunc(cands, is)
	if i < 0 {
		return autotune.Candidate{}, cands, false
	}
	c := cands[i]
	c.Values = slices.Clone(c.Values)
	return c, slices.Delete(slices.Clone(cands), i, i+1), true
}

func upsert(cs []autotune.Candidate, c autotune.Candidate) []autotune.Candidate {
	if i := slices.IndexFunc(cs, func(x autotune.Candidate) bool { return x.Knob == c.Knob }); i >= 0 {
		cs[i] = c
		return cs
	}
	return append(cs, c)
}
