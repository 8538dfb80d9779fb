package report

import (
	"fmt"

	"redline/internal/labdata"
	"redline/internal/stats"
	"redline/internal/textsafe"
)

// The lab compares connection set-up for a workload with connect: true
// (connect p99, the time until every client was ready, the share of
// connects that succeeded), with the same verdict as throughput; the
// report shows what the lab recorded, as it does for throughput.

// connectIntro says how to read the section.
const connectIntro = "Connection set-up, compared like throughput (the lab's verdicts): the time a connect took (SYN to established) at p99, " +
	"the time until every client was connected and ready, and the share of connects that succeeded. " +
	"A listen queue that overflowed shows here as connect times near a SYN retransmit (1 s, 3 s), a full local port range as connects that failed."

var connectHeader = []string{"workload", "metric", "variant", "median", "baseline", "ratio [interval]", "verdict", "why"}

// connectRows are the lab's connection set-up comparisons, a row each.
func connectRows(res *labdata.Result) [][]string {
	if res == nil {
		return nil
	}
	var rows [][]string
	for _, c := range res.Comparisons {
		m, ok := labdata.ConnectMetric(c.Metric)
		if !ok {
			continue
		}
		title := m.Title
		f := func(v float64) string { return fmt.Sprintf("%.4g", v) }
		ratio := stats.FormatRatio(c.Ratio, c.HigherIsBetter)
		if c.HasCI {
			ratio += " [" + fmtRatio(c.CILow) + ", " + fmtRatio(c.CIHigh) + "]"
		}
		rows = append(rows, []string{c.Workload, title, c.Variant, f(c.Median), f(c.BaselineMedian), ratio, c.Verdict, c.Reason})
	}
	return rows
}

// writeConnectMD writes the connection set-up comparisons, if any.
func writeConnectMD(mw *textsafe.Writer, res *labdata.Result) {
	rows := connectRows(res)
	if len(rows) == 0 {
		return
	}
	mw.Printf("\n## Connection set-up\n\n%s\n\n", connectIntro)
	table(mw, "lllrrlll", connectHeader, mdRows(rows))
}

func (v *htmlView) connect(r *Report) {
	rows := connectRows(r.Lab)
	if len(rows) == 0 {
		return
	}
	t := htmlTable{Header: connectHeader}
	for _, row := range rows {
		t.Rows = append(t.Rows, cells(row, "", "", "", "num", "num", "num"))
	}
	v.Connect, v.ConnectIntro = []htmlTable{t}, connectIntro
}
