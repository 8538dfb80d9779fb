package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"redline/internal/labdata"
	"redline/internal/stats"
)

// The lab's answer on the terminal: one table of what the lab recorded,
// throughput and p99 side by side, in 80 columns; below it why each
// comparison without a claim has none, and how the lab stopped.

const nameWidth = 12

// shortVerdicts fit the table; the reasons below use the full words.
var shortVerdicts = map[string]string{
	stats.LabWords.Better: "helps", stats.LabWords.Worse: "hurts",
	stats.LabWords.Unclear: "unclear", stats.VerdictTooFew: "too few",
}

// printVerdicts writes the table of the comparisons res recorded.
func printVerdicts(w io.Writer, res *labdata.Result) {
	if res == nil || len(res.Comparisons) == 0 {
		return
	}
	fmt.Fprintf(w, "%-*s %-*s %-10s %s\n", nameWidth, "workload", nameWidth, "variant", "metric", strings.TrimRight(cellHeader, " "))
	var why, steady []string
	for _, c := range res.Comparisons {
		if c.Metric == labdata.MetricSpread.Key && stats.Claims(c.Verdict) {
			word := "steadier"
			if c.Verdict == stats.LabWords.Worse {
				word = "less steady"
			}
			steady = append(steady, fmt.Sprintf("%s on %s is %s: run-to-run spread %s [%s,%s]", c.Variant, c.Workload, word, ratioWord(&c), short(c.CILow), short(c.CIHigh)))
		}
	}
	for _, row := range verdictRows(res.Comparisons) {
		wl, vr := clipHead(row.workload), clip(row.variant)
		for _, c := range []*labdata.Comparison{row.rps, row.p99} {
			if c == nil {
				continue
			}
			line := fmt.Sprintf("%-*s %-*s %-10s %s", nameWidth, wl, nameWidth, vr, labdata.MetricName(c.Metric), cell(c))
			fmt.Fprintln(w, strings.TrimRight(line, " "))
			wl, vr = "", ""
		}
		for _, c := range []*labdata.Comparison{row.rps, row.p99} {
			if c != nil && c.Reason != "" {
				why = append(why, fmt.Sprintf("%s %s %s %s: %s", c.Workload, c.Variant, labdata.MetricName(c.Metric), c.Verdict, c.Reason))
			}
		}
	}
	if answer := res.NothingClear(); answer != "" {
		why = append([]string{answer}, why...)
	}
	for _, s := range append(append(steady, connectLines(res.Comparisons)...), why...) {
		fmt.Fprint(w, wrap("- "+s, 80, "  "))
	}
	if busy := busyLine(res); busy != "" {
		fmt.Fprint(w, wrap("- "+busy, 80, "  "))
	}
	if q := res.Sequential; q != nil {
		fmt.Fprint(w, wrap(fmt.Sprintf("%d rounds in %s (%s); %d comparisons share a %.0f%% false-positive rate.",
			q.Rounds, res.Finished.Sub(res.Started).Round(time.Second), q.Stopped, q.Comparisons, 100*q.Alpha), 80, ""))
	}
}

// busyLine says, when runs were flagged as noisy, how busy the machine
// was: the verdicts above are only as good as the runs.
func busyLine(res *labdata.Result) string {
	var outside []float64
	flagged := 0
	for _, r := range res.Runs {
		if r.Noise == nil {
			continue
		}
		outside = append(outside, r.Noise.OutsideCPU)
		if r.Noise.Noisy != "" {
			flagged++
		}
	}
	if flagged == 0 {
		return ""
	}
	return fmt.Sprintf("the machine was busy: %d of %d runs flagged as noisy; other work took %.0f%% of the CPU in the median run (the report has the noise per variant)",
		flagged, len(outside), 100*stats.Median(outside))
}

const cellHeader = "ratio        interval    verdict "

type verdictRow struct {
	workload, variant string
	rps, p99          *labdata.Comparison
}

// verdictRows pairs each workload and variant's throughput and p99
// comparisons, in the order the lab recorded them.
func verdictRows(cs []labdata.Comparison) []verdictRow {
	var rows []verdictRow
	find := func(w, v string) *verdictRow {
		for i := range rows {
			if rows[i].workload == w && rows[i].variant == v {
				return &rows[i]
			}
		}
		rows = append(rows, verdictRow{workload: w, variant: v})
		return &rows[len(rows)-1]
	}
	for i := range cs {
		switch cs[i].Metric {
		case labdata.MetricRPS.Key:
			find(cs[i].Workload, cs[i].Variant).rps = &cs[i]
		case labdata.MetricP99.Key:
			find(cs[i].Workload, cs[i].Variant).p99 = &cs[i]
		}
	}
	return rows
}

// cell is one metric's "×1.02 better [0.98,1.05] unclear".
func cell(c *labdata.Comparison) string {
	ci, v := intervalVerdict(c)
	return fmt.Sprintf("%-12s %-11s %-7s ", ratioWord(c), ci, v)
}

// ratioWord is c's ratio as stats' convention prints it (this ÷ the
// baseline, "×"), short, with the word for its direction: "×1.09 worse"
// of a p99, "×1.09 better" of a throughput.
func ratioWord(c *labdata.Comparison) string {
	return "×" + short(c.Ratio) + " " + stats.Direction(c.Ratio, c.HigherIsBetter)
}

// intervalVerdict is a comparison's interval ("[0.98,1.05]") and its
// verdict in the terminal's short words.
func intervalVerdict(c *labdata.Comparison) (ci, verdict string) {
	ci = "no interval"
	if c.HasCI {
		ci = "[" + short(c.CILow) + "," + short(c.CIHigh) + "]"
	}
	verdict = shortVerdicts[c.Verdict]
	if verdict == "" {
		verdict = c.Verdict
	}
	return ci, verdict
}

// short prints a ratio in four characters: 0.97, 43.5, 120.
func short(r float64) string {
	switch {
	case r < 9.995:
		return fmt.Sprintf("%.2f", r)
	case r < 99.95:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.0f", r)
}

// connectLines gives each workload and variant's set-up comparisons one
// line: "net-sysctl on storm: connect p99 ×0.00 better [0.00,0.00] helps; ...".
func connectLines(cs []labdata.Comparison) []string {
	var out []string
	idx := map[string]int{}
	for _, c := range cs {
		m, ok := labdata.ConnectMetric(c.Metric)
		if !ok {
			continue
		}
		k := c.Variant + " on " + c.Workload
		i, seen := idx[k]
		if !seen {
			i, idx[k] = len(out), len(out)
			out = append(out, k+": ")
		} else {
			out[i] += "; "
		}
		ci, v := intervalVerdict(&c)
		out[i] += fmt.Sprintf("%s %s %s %s", m.Name, ratioWord(&c), ci, v)
	}
	return out
}

// clipHead keeps a workload's end, where a sweep's value and a test's
// name are: "~ues[d=3000]".
func clipHead(s string) string {
	if len(s) <= nameWidth {
		return s
	}
	return "~" + s[len(s)-nameWidth+1:]
}

func clip(s string) string {
	if len(s) <= nameWidth {
		return s
	}
	return s[:nameWidth-1] + "~"
}

// wrap breaks s into lines of at most width columns, continuing with
// indent.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	line := ""
	for _, word := range strings.Fields(s) {
		if line != "" && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line = indent + word
			continue
		}
		if line == "" {
			line = word
		} else {
			line += " " + word
		}
	}
	if line != "" {
		b.WriteString(line + "\n")
	}
	return b.String()
}

// printRemoteCleanup says what the server host did by itself when the
// link to it was lost.
func printRemoteCleanup(w io.Writer, res *labdata.Result) {
	if res == nil || res.RemoteCleanup == nil {
		return
	}
	rc, host := res.RemoteCleanup, res.Target.SSH
	if rc.Unknown != "" {
		fmt.Fprintf(w, "redline lab: the link to %s was lost; %s\n", host, rc.Unknown)
		return
	}
	errs := ""
	if len(rc.Errors) > 0 {
		errs = fmt.Sprintf("; errors: %q", rc.Errors)
	}
	fmt.Fprintf(w, "redline lab: the link to %s was lost; the session there (%s) restored %d change(s) and stopped %d redis-server(s) by itself%s\n",
		host, rc.Reason, len(rc.Restored), len(rc.Stopped), errs)
}
