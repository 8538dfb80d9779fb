package lab

import (
	"slices"

	"redline/internal/labdata"
)

// ScratchRules are the doctor's rules that judge what the lab chose for
// its own scratch server rather than the host under test, with why. On a
// server the lab starts, their findings are marked (labdata.Finding.Scratch)
// and their fixes left out of the doctor's safe fixes: the lab reserved
// the free port it had picked, and set a maxmemory for a server that holds
// only the benchmark's keys (issue 41).
var ScratchRules = map[string]string{
	"reserved-ports": "the lab's server listens on a free port the lab picked for it; a production server's port is yours to reserve",
	"maxmemory":      "the lab's server holds only the benchmark's keys; the limit to set is the production server's",
}

// ScratchServer reports whether the lab starts the target's server itself
// (managed, managed-cluster, netns, or ssh without a port), rather than
// measuring an existing one.
func ScratchServer(t labdata.TargetSpec) bool {
	switch t.Kind {
	case "", "managed", "managed-cluster", "netns":
		return true
	case "ssh":
		return t.Port == 0
	}
	return false
}

// markScratch marks the findings of ScratchRules and leaves their changes
// out of fixes, with a note for each rule left out.
func markScratch(fs []labdata.Finding, fixes Fixes) ([]labdata.Finding, Fixes) {
	out := make([]labdata.Finding, len(fs))
	for i, f := range fs {
		out[i] = f
		if why, ok := ScratchRules[f.ID]; ok {
			out[i].Scratch = why
		}
	}
	var left []string
	kept := Fixes{Notes: slices.Clone(fixes.Notes)}
	for _, c := range fixes.Changes {
		if _, ok := ScratchRules[c.Rule]; !ok {
			kept.Changes = append(kept.Changes, c)
		} else if !slices.Contains(left, c.Rule) {
			left = append(left, c.Rule)
		}
	}
	for _, id := range left {
		kept.Notes = append(kept.Notes, id+": left out: about the lab's own server: "+ScratchRules[id])
	}
	return out, kept
}
