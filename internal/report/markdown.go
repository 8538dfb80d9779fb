package report

import (
	"fmt"
	"io"
	"strings"

	"redline/internal/textsafe"
)

// WriteMarkdown writes the report as Markdown: notes, a summary table,
// for a lab result its host, target, findings and plans, then per
// workload the throughput, p99 and percentile tables, every run, and the
// provenance.
func WriteMarkdown(w io.Writer, r *Report) error {
	mw := textsafe.NewWriter(w)
	mw.Printf("# %s\n", md(r.Title))
	if r.Lab != nil && r.Lab.Scenario.Description != "" {
		mw.Printf("\n%s\n", md(r.Lab.Scenario.Description))
	}
	writeNotesMD(mw, r.Notes)
	writeSummaryMD(mw, r)
	if r.Lab != nil {
		writeConnectMD(mw, r.Lab)
		writeServerTimeMD(mw, r.Lab)
		writeProfilesMD(mw, r.Lab)
	}
	writeSweepsMD(mw, r)
	writeCapacityMD(mw, r)
	if r.Lab != nil {
		writeLabContextMD(mw, r)
	}
	writeResultsMD(mw, r)
	writeRunsMD(mw, r)
	writeProvenanceMD(mw, r)
	return mw.Err()
}

func writeNotesMD(mw *textsafe.Writer, notes []string) {
	if len(notes) == 0 {
		return
	}
	mw.Printf("\n> **Read this first.**\n")
	for _, n := range notes {
		mw.Printf(">\n> - %s\n", mdNote(n))
	}
}

// md and code are the one escaping of Markdown text and of code spans
// (textsafe): a value from a result (a host's, a server's, a scenario's:
// names, CONFIG values, reasons, paths) shows as text, adding no HTML,
// link, code span or table column.
var md, code = textsafe.MarkdownText, textsafe.MarkdownCode

// mdNote is a note as the HTML shows it (codeSpans): text whose
// `backticked` parts are code, each part escaped as such; with unbalanced
// backticks, all text.
func mdNote(s string) string {
	parts := strings.Split(s, "`")
	if len(parts)%2 == 0 {
		return md(s)
	}
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			b.WriteString(code(p))
		} else {
			b.WriteString(md(p))
		}
	}
	return b.String()
}

// table writes a Markdown table; align holds one of 'l' or 'r' per column.
func table(mw *textsafe.Writer, align string, header []string, rows [][]string) {
	mw.Printf("\n| %s |\n|", strings.Join(header, " | "))
	for _, a := range align {
		mw.Printf("%s|", map[rune]string{'l': "---", 'r': "--:"}[a])
	}
	mw.Printf("\n")
	for _, row := range rows {
		mw.Printf("| %s |\n", strings.Join(row, " | "))
	}
}

// writeSummaryMD writes one pivot per metric: workloads by labels.
func writeSummaryMD(mw *textsafe.Writer, r *Report) {
	if len(r.Workloads) == 0 {
		return
	}
	mw.Printf("\n## Summary\n")
	for _, m := range shownMetrics(r) {
		mw.Printf("\n%s, median of the runs; the change against %s is named only where its interval excludes 1.\n", m.Title, md(r.Reference))
		header := append([]string{"workload"}, mdAll(r.Labels)...)
		table(mw, "l"+strings.Repeat("r", len(r.Labels)), header, summaryRows(r, m))
	}
}

// writeSweepsMD writes each swept workload's metrics against its values.
func writeSweepsMD(mw *textsafe.Writer, r *Report) {
	sws := sweeps(r)
	if len(sws) == 0 {
		return
	}
	mw.Printf("\n## Sweeps\n\nMedian of the runs at each value, with its 95%% interval from order statistics.\n")
	for _, sw := range sws {
		for m, metric := range sweepMetrics {
			mw.Printf("\n**%s: %s against %s**\n", md(sw.Name), metric.title, md(sw.Param))
			table(mw, "l"+strings.Repeat("r", len(r.Labels)), append([]string{md(sw.Param)}, mdAll(r.Labels)...), mdRows(sweepRows(r, sw, m)))
		}
	}
}

func mdAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = md(s)
	}
	return out
}

func summaryRows(r *Report, m metric) [][]string {
	var rows [][]string
	for _, w := range r.Workloads {
		row := []string{md(w.Name)}
		for _, l := range r.Labels {
			row = append(row, summaryCell(w.Group(l), m))
		}
		rows = append(rows, row)
	}
	return rows
}

func summaryCell(g *Group, m metric) string {
	if !m.has(g) {
		return "n/a"
	}
	s := m.format(m.spread(g).Median)
	if v := m.versus(g); v != nil {
		s += " " + fmtBrief(v)
	}
	return s
}

// writeResultsMD writes, per workload, the comparison tables.
func writeResultsMD(mw *textsafe.Writer, r *Report) {
	mw.Printf("\n## Results\n\n%s\n", howToRead)
	for _, w := range r.Workloads {
		mw.Printf("\n### %s\n", md(w.Name))
		writeCommandsMD(mw, w.Commands)
		for _, m := range shownMetrics(r) {
			mw.Printf("\n**%s**\n", m.Title)
			table(mw, "lrrrrrl", []string{md(r.Dimension), "runs", "median", "min..max", "spread", "ratio [CI]", "verdict"}, mdRows(metricRows(w, m, r.markComputed)))
		}
		mw.Printf("\n**Latency percentiles** (ms), from the HDR histograms of each group's runs merged into one\n")
		table(mw, "lrrrrrrrrrr", mdAll(percentileHeader(r.Dimension)), mdRows(percentileRows(w)))
	}
}

// howToRead explains the numbers once, in every format.
const howToRead = "Each figure is the median over a group's runs, with min..max and the spread ((max-min)/median) between runs. " +
	"The ratio is the median of the ratios of every pair of runs (one of the group, one of the reference); its interval is the exact Mann-Whitney (Hodges-Lehmann) interval, which assumes no shape of the runs' distribution, " +
	"at the confidence that keeps the chance of any false claim in the whole lab (or report) at 5%. " +
	"A lab that ran enough rounds compares throughput and p99 round by round instead (its notes say so): the ratio and interval are then of the ratios of the two runs of each round (exact Wilcoxon signed-rank), which cancels what the machine did to a whole round. " +
	"A verdict names a change only when that interval excludes 1; otherwise it says there is no clear change and why, however large the ratio looks. " +
	"The p99 comparison uses each run's own p99. The percentile tables and curves read the HDR histograms of all runs of a group merged into one: " +
	"merging histograms combines percentiles exactly, averaging per-run percentiles would not."

func metricRows(w *Workload, m metric, mark bool) [][]string {
	var rows [][]string
	for _, g := range w.Groups {
		if !m.has(g) {
			rows = append(rows, []string{groupName(g), runsCell(g), "n/a", "", "", "", ""})
			continue
		}
		sp := m.spread(g)
		v := m.versus(g)
		rows = append(rows, []string{groupName(g), runsCell(g), m.format(sp.Median),
			m.format(sp.Min) + ".." + m.format(sp.Max), spreadCell(g, sp), versusCell(g, v, mark), fmtVerdict(v)})
	}
	return rows
}

// spreadCell is the spread between a group's runs: n/a for one run.
func spreadCell(g *Group, sp Spread) string {
	if g.N < 2 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", sp.Pct())
}

func versusCell(g *Group, v *Versus, mark bool) string {
	if g.Reference {
		return "reference"
	}
	return fmtVersus(v, mark)
}

func groupName(g *Group) string {
	if g.Reference {
		return g.Label + " (ref)"
	}
	return g.Label
}

// mdRows escapes every cell.
func mdRows(rows [][]string) [][]string {
	for _, row := range rows {
		for i := range row {
			row[i] = md(row[i])
		}
	}
	return rows
}

func runsCell(g *Group) string {
	s := itoa(g.N)
	if g.LeftOut > 0 {
		s += fmt.Sprintf(" (+%d left out)", g.LeftOut)
	}
	return s
}

func percentileHeader(dim string) []string {
	return []string{dim, "requests", "errors", "p50", "p90", "p99", "p99.9", "p99.99", "max", "runs merged", "server CPU µs/req"}
}

func percentileRows(w *Workload) [][]string {
	var rows [][]string
	for _, g := range w.Groups {
		row := []string{g.Label, fmtRPS(float64(g.Requests)), fmtRPS(float64(g.Errors))}
		if l := g.Latency; l != nil {
			row = append(row, fmtMs(l.P50), fmtMs(l.P90), fmtMs(l.P99), fmtMs(l.P999), fmtMs(l.P9999), fmtMs(l.Max))
		} else {
			row = append(row, "n/a", "n/a", "n/a", "n/a", "n/a", "n/a")
		}
		rows = append(rows, append(row, fmt.Sprintf("%d of %d", g.HistogramRuns, g.N), fmtCPU(g.ServerCPUPerRequest)))
	}
	return rows
}

func writeRunsMD(mw *textsafe.Writer, r *Report) {
	if len(r.Runs) == 0 {
		return
	}
	cols := runColumns(r)
	mw.Printf("\n## Runs\n\nEvery measurement in the order it was taken.\n")
	header, align := make([]string, len(cols)), ""
	for i, c := range cols {
		header[i] = c.header
		align += string(c.align)
	}
	var rows [][]string
	for _, s := range r.Runs {
		row := make([]string, len(cols))
		for i, c := range cols {
			row[i] = md(c.value(s))
		}
		rows = append(rows, row)
	}
	table(mw, align, header, rows)
}

func writeCommandsMD(mw *textsafe.Writer, cmds []string) {
	if len(cmds) == 1 {
		mw.Printf("\nCommand: %s\n", code(cmds[0]))
		return
	}
	if len(cmds) > 1 {
		mw.Printf("\nCommands:\n\n")
	}
	for _, c := range cmds {
		mw.Printf("- %s\n", code(c))
	}
}
