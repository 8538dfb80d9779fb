package doctor

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// PromOptions label and date the Prometheus textfile.
type PromOptions struct {
	// Host labels every series (host="..."): the hostname here, or the
	// --ssh destination. Empty leaves the label out, for a textfile that
	// node_exporter serves with its own instance label.
	Host string
	// Now is when doctor ran (redline_doctor_last_run_timestamp_seconds);
	// zero leaves the series out.
	Now time.Time
}

// WritePrometheus writes the report in the Prometheus text exposition
// format, for node_exporter's textfile collector: one series per rule
// (and per server or cluster node it judged) with its severity and state
// as labels and 1 when it fired, 0 otherwise; the fired counts by
// severity; the report's errors; and when it ran. Alert rules select
// redline_doctor_finding == 1 (see examples/prometheus/redline-alerts.yml).
func WritePrometheus(w io.Writer, r *Report, o PromOptions) error {
	var b strings.Builder
	host := promLabel("host", o.Host)
	b.WriteString("# HELP redline_doctor_finding One doctor rule's outcome on this host: 1 when it fired, 0 when it passed, did not apply or could not check (state says which).\n")
	b.WriteString("# TYPE redline_doctor_finding gauge\n")
	for _, f := range promSorted(r.Findings) {
		labels := []string{host, promLabel("rule", f.ID), promLabel("section", f.Section), promLabel("severity", f.Severity.String()), promLabel("state", string(f.Status))}
		if f.Node != "" {
			labels = append(labels, promLabel("node", f.Node))
		}
		if f.Pid != 0 {
			labels = append(labels, promLabel("pid", strconv.Itoa(f.Pid)))
		}
		fmt.Fprintf(&b, "%s %d\n", promSeries("redline_doctor_finding", labels...), promBool(f.Status == Fired))
	}
	s := r.Summarize()
	b.WriteString("# HELP redline_doctor_fired Findings that fired, by severity.\n# TYPE redline_doctor_fired gauge\n")
	for sev := Info; sev <= High; sev++ {
		fmt.Fprintf(&b, "%s %d\n", promSeries("redline_doctor_fired", host, promLabel("severity", sev.String())), s.Fired[sev.String()])
	}
	b.WriteString("# HELP redline_doctor_errors Rules that errored, host files that did not read or parse, cluster nodes that could not be read: the report is incomplete when above 0.\n# TYPE redline_doctor_errors gauge\n")
	fmt.Fprintf(&b, "%s %d\n", promSeries("redline_doctor_errors", host), s.Errors+s.ReadErrors+s.NodeErrors)
	if !o.Now.IsZero() {
		b.WriteString("# HELP redline_doctor_last_run_timestamp_seconds When doctor wrote this file (Unix time).\n# TYPE redline_doctor_last_run_timestamp_seconds gauge\n")
		fmt.Fprintf(&b, "%s %d\n", promSeries("redline_doctor_last_run_timestamp_seconds", host), o.Now.Unix())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// promSorted orders findings by rule, then node and pid, so the file is
// stable from run to run (the report orders them by severity and state,
// which change).
func promSorted(fs []Finding) []Finding {
	out := append([]Finding(nil), fs...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		if a.Node != b.Node {
			return a.Node < b.Node
		}
		return a.Pid < b.Pid
	})
	return out
}

func promBool(v bool) int {
	if v {
		return 1
	}
	return 0
}

// promLabel is name="value" with the exposition format's escapes, or ""
// for an empty value (the label is then left out).
func promLabel(name, value string) string {
	if value == "" {
		return ""
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return name + `="` + r.Replace(value) + `"`
}

// promSeries is name{labels}, leaving out empty labels (and the braces
// when none is left).
func promSeries(name string, labels ...string) string {
	var kept []string
	for _, l := range labels {
		if l != "" {
			kept = append(kept, l)
		}
	}
	if len(kept) == 0 {
		return name
	}
	return name + "{" + strings.Join(kept, ",") + "}"
}
