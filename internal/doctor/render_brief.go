package doctor

import (
	"fmt"
	"redline/internal/textsafe"
	"sort"
	"strings"
)

// The default text report is brief: each finding in two lines (what, and
// the first fix), a finding a rule made for several servers once, and the
// rules that did not check or do not apply in one line of grouped reasons.
// --verbose (RenderOptions.Verbose) prints everything, as JSON does.

// writeBriefFindings writes fs, one severity's findings.
func writeBriefFindings(tw *textsafe.Writer, fs []Finding, addr string) {
	var order []string
	byID := map[string][]Finding{}
	for _, f := range fs {
		if byID[f.ID] == nil {
			order = append(order, f.ID)
		}
		byID[f.ID] = append(byID[f.ID], f)
	}
	for _, id := range order {
		g := byID[id]
		tw.Printf("  [%s] %s\n", id, g[0].Message)
		if len(g) > 1 {
			pids := make([]string, 0, len(g)-1)
			for _, f := range g[1:] {
				pids = append(pids, fmt.Sprint(f.Pid))
			}
			tw.Printf("    and on %d more server(s): pids %s\n", len(g)-1, strings.Join(pids, ", "))
		}
		if fx := g[0].Fix; fx != nil {
			switch {
			case len(fx.Changes) > 0:
				tw.Printf("    fix%s: %s\n", fx.needs(), Command(fx.Changes[0], addr))
			case len(fx.Advice) > 0:
				tw.Printf("    advice: %s\n", fx.Advice[0])
			}
		}
	}
}

// writeSkipped is one line for the rules not checked or not applicable,
// their reasons grouped (the same reason for several servers once).
func writeSkipped(tw *textsafe.Writer, r *Report) {
	nc, na := r.byStatus(NotChecked), r.byStatus(NotApplicable)
	if len(nc)+len(na) == 0 {
		return
	}
	count := map[string]int{}
	for _, f := range append(nc, na...) {
		count[bareReason(f)]++
	}
	reasons := make([]string, 0, len(count))
	for k := range count {
		reasons = append(reasons, k)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if count[reasons[i]] != count[reasons[j]] {
			return count[reasons[i]] > count[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	const shown = 3
	var parts []string
	for _, k := range reasons[:min(shown, len(reasons))] {
		parts = append(parts, fmt.Sprintf("%d× %s", count[k], k))
	}
	if len(reasons) > shown {
		parts = append(parts, fmt.Sprintf("%d other reasons", len(reasons)-shown))
	}
	tw.Printf("\n%d not checked, %d not applicable (--verbose lists each): %s\n", len(nc), len(na), strings.Join(parts, "; "))
}

// bareReason is a finding's reason without the server it was judged for.
func bareReason(f Finding) string {
	if f.Pid != 0 && strings.HasPrefix(f.Reason, "redis-server") {
		if i := strings.Index(f.Reason, ": "); i >= 0 {
			return f.Reason[i+2:]
		}
	}
	return f.Reason
}
