package rules

import (
	"fmt"
	"strings"

	"redline/internal/doctor"
	"redline/internal/host"
)

// nicTally records, for a rule that looks at every target NIC, which ones
// it checked and why it did not check the others, so that an ok names only
// the NICs it checked and the rest are named with their reason.
type nicTally struct {
	checked    []string
	unchecked  []string // "eth1 (no queues/tx-* in this tree)"
	notApplied []string // "eth2 (one TX queue)"
}

func (t *nicTally) check(n *host.NIC) { t.checked = append(t.checked, n.Name) }

func (t *nicTally) notChecked(n *host.NIC, format string, args ...any) {
	t.unchecked = append(t.unchecked, fmt.Sprintf("%s (%s)", n.Name, fmt.Sprintf(format, args...)))
}

func (t *nicTally) notApplicable(n *host.NIC, format string, args ...any) {
	t.notApplied = append(t.notApplied, fmt.Sprintf("%s (%s)", n.Name, fmt.Sprintf(format, args...)))
}

// result is pass when some NIC was checked, its message naming the NICs
// that were not; not checked when none was and some could not be; not
// applicable otherwise (none is a reason when there was no NIC at all).
func (t *nicTally) result(pass doctor.Result, none string) doctor.Result {
	var others []string
	if len(t.unchecked) > 0 {
		others = append(others, "not checked: "+strings.Join(t.unchecked, ", "))
	}
	if len(t.notApplied) > 0 {
		others = append(others, "not applicable: "+strings.Join(t.notApplied, ", "))
	}
	switch {
	case len(t.checked) > 0:
		if len(others) > 0 {
			pass.Message += "; " + strings.Join(others, "; ")
		}
		return pass
	case len(t.unchecked) > 0:
		return doctor.Unchecked("%s", strings.Join(others, "; "))
	case len(t.notApplied) > 0:
		return doctor.Skip("%s", strings.Join(t.notApplied, ", "))
	}
	return doctor.Skip("%s", none)
}

// inThisTree ends a reason about a file the snapshot lacks: in a fixture
// tree the capture may simply not hold it.
func inThisTree(f *doctor.Facts) string {
	if f.Host != nil && !f.Host.Source.Live {
		return " in this tree"
	}
	return ""
}
