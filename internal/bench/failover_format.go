package bench

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"redline/internal/benchdata"
)

// maxSecondLines bounds the per-second failure lines in the terminal;
// the -o JSON has every second.
const maxSecondLines = 20

// writeFailover writes what a --reconnect run went through: the totals,
// each outage, and the seconds that saw failures.
func writeFailover(w io.Writer, indent string, f *benchdata.Failover) {
	head := fmt.Sprintf("%sfailover: %d requests failed, %d connects failed, %d reconnects", indent, f.FailedRequests, f.FailedConnects, f.Reconnects)
	if f.Primary != "" {
		head += fmt.Sprintf(", %d primary switches (last %s)", f.Switches, f.Primary)
	} else if f.Switches > 0 {
		head += fmt.Sprintf(", %d slot map refreshes", f.Switches)
	}
	if len(f.Outages) == 0 {
		head += "; no outage"
	}
	fmt.Fprintln(w, head)
	for i, o := range f.Outages {
		fmt.Fprintf(w, "%soutage %d: %s\n", indent, i+1, outageNote(o))
	}
	for i, s := range f.Seconds {
		if i == maxSecondLines {
			fmt.Fprintf(w, "%s... %d more seconds with failures (-o JSON: failover.seconds)\n", indent, len(f.Seconds)-i)
			break
		}
		fmt.Fprintf(w, "%ssecond %d: %d ok, failed %s\n", indent, s.Second, s.OK, kindsNote(s.Failures))
	}
}

// outageNote is one outage on one line.
func outageNote(o benchdata.Outage) string {
	end := "recovered"
	if !o.Recovered {
		end = "not recovered when the run ended"
	}
	l := fmt.Sprintf("%.3f s long, from %.3f s to %.3f s of the run (seconds %d-%d), %s; %d requests failed (%s)",
		o.Seconds, o.StartSeconds, o.EndSeconds, o.FirstSecond, o.LastSecond, end, o.FailedRequests, kindsNote(o.Failures))
	if o.Straddled > 0 {
		l += fmt.Sprintf("; %d answered across it: p50 %.3f p99 %.3f max %.3f msec", o.Straddled, o.StraddledP50Ms, o.StraddledP99Ms, o.StraddledMaxMs)
	}
	return l
}

// kindsNote lists failures by kind, in a stable order.
func kindsNote(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
