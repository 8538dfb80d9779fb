package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"

	"redline/internal/labdata"
	"redline/internal/textsafe"
)

// Autotune is a redline autotune session as its report shows it. The
// command builds it from its result (report does not link the search);
// autotuneDoc lays it out once and the Markdown and HTML writers only
// encode that layout, so the two files cannot disagree.
type Autotune struct {
	// Objective says what was measured and what a ratio means; Workload
	// is the load line; Target the server; Procedure the error budget.
	Objective, Workload, Target, Procedure string
	Noise                                  AutotuneNoise
	// Doctor is what the doctor found and which knobs it put first.
	Doctor []string
	// Builds are the server.build values: each name, its spec and the
	// built binary's provenance, one line each.
	Builds []string
	// Goal is the gain racing sought (0.03 for 3%): the chart marks it.
	Goal   float64
	Trials []AutotuneTrial
	// Untested are "knob = value: why" lines.
	Untested []string
	// Result is the confirmation in one sentence; Confirmed colours it.
	Result    string
	Confirmed bool
	// Baseline and Plan are where the server's time went in one
	// confirmation run of each (nil: not sampled, BreakdownNote says why).
	Baseline, Plan *labdata.Breakdown
	BreakdownNote  string
	// BaselineCommands and PlanCommands are the same runs' server time by
	// command (INFO commandstats).
	BaselineCommands, PlanCommands []AutotuneCommand
	Measurements                   int
}

// AutotuneNoise is the baseline against itself.
type AutotuneNoise struct {
	Rounds int
	// Sigma is the paired spread, Detectable the smallest gain detected
	// with 95% power (0.05 for 5%); AA the A/A comparison's text.
	Sigma, Detectable float64
	AA                string
}

// AutotuneTrial is one comparison against the incumbent.
type AutotuneTrial struct {
	N                               int
	Phase, Setting, Against, Reason string
	Decision                        string // "kept" or "dropped"
	InFinal                         bool   // kept and still in the final plan
	Rounds                          int
	Looks                           []AutotuneLook
	P99                             string // the p99 bound's state, when bounded
}

// AutotuneCommand is one command's calls and server time over a run.
type AutotuneCommand struct {
	Command     string
	Calls, Usec int64
}

// AutotuneLook is a comparison's estimate and interval at one look.
type AutotuneLook struct {
	Rounds               int
	Ratio, CILow, CIHigh float64
	HasCI                bool
}

// atSection is one section of the autotune report, in either encoding.
type atSection struct {
	ID, Title  string
	Paragraphs []string
	List       []string
	Tables     []htmlTable
	Chart      bool // the trajectory chart goes here (HTML)
}

// autotuneDoc lays the report out: the one place its content is decided.
func autotuneDoc(a *Autotune) []atSection {
	n := a.Noise
	noise := "Not measured: the session stopped first."
	if n.Rounds > 0 {
		noise = fmt.Sprintf("%d rounds of the baseline against itself: paired spread %.2f%% (1.4826 × the median absolute deviation of the paired log-ratios), A/A %s; the smallest gain a comparison detects with 95%% power by its last look: %.2f%%. Racing drops a candidate once it cannot reach %.1f%%.",
			n.Rounds, 100*n.Sigma, n.AA, 100*n.Detectable, 100*a.Goal)
	}
	secs := []atSection{
		{ID: "objective", Title: "Objective", Paragraphs: []string{"Objective: " + a.Objective + ".", "Workload: " + a.Workload + ".", "Target: " + a.Target + ".", a.Procedure}},
		{ID: "noise", Title: "Noise", Paragraphs: []string{noise}},
	}
	if len(a.Doctor) > 0 {
		secs = append(secs, atSection{ID: "doctor", Title: "Doctor", List: a.Doctor})
	}
	if len(a.Builds) > 0 {
		secs = append(secs, atSection{ID: "builds", Title: "Builds", Paragraphs: []string{"The values of server.build: each a redis-server built by redline build on the server host, its server started beside the baseline's."}, List: a.Builds})
	}
	secs = append(secs, []atSection{
		{ID: "result", Title: "Result", Paragraphs: []string{a.Result, fmt.Sprintf("%d measurements.", a.Measurements)}, Tables: a.decisionTables()},
		{ID: "trajectory", Title: "Trajectory", Chart: true,
			Paragraphs: []string{"Every comparison against the incumbent at each look it reached: the ratio (candidate ÷ incumbent, of the objective's goodness) and its interval at the session's level; the last look decided."},
			Tables:     []htmlTable{a.trajectoryTable()}},
		a.serverTimeSection(),
	}...)
	for i := range secs {
		printable(&secs[i])
	}
	return secs
}

// printable makes every text of s printable: knob values and reasons may
// hold what a server or a journal file said, and a control character
// must neither act on a terminal showing the Markdown nor break the page.
func printable(s *atSection) {
	for i, p := range s.Paragraphs {
		s.Paragraphs[i] = textsafe.Printable(p)
	}
	for i, l := range s.List {
		s.List[i] = textsafe.Printable(l)
	}
	for _, t := range s.Tables {
		for _, row := range t.Rows {
			for i := range row {
				row[i].Text = textsafe.Printable(row[i].Text)
			}
		}
	}
}

func (a *Autotune) decisionTables() []htmlTable {
	kept := htmlTable{Title: "Kept", Header: []string{"#", "setting", "against", "ratio", "interval", "rounds"}}
	rej := htmlTable{Title: "Rejected", Header: []string{"#", "setting", "against", "ratio", "interval", "rounds", "why"}}
	for _, t := range a.Trials {
		last := t.last()
		row := cells([]string{itoa(t.N), t.Setting, t.Against, ratioCell(last), ciCell(last), itoa(t.Rounds)}, "num", "code", "code", "num", "num", "num")
		switch {
		case t.Decision == "kept" && t.InFinal:
			kept.Rows = append(kept.Rows, row)
		case t.Decision == "kept":
			rej.Rows = append(rej.Rows, append(row, htmlCell{Text: "kept, then replaced by a later setting of the knob"}))
		default:
			rej.Rows = append(rej.Rows, append(row, htmlCell{Text: t.Reason}))
		}
	}
	out := []htmlTable{kept, rej}
	if len(a.Untested) > 0 {
		un := htmlTable{Title: "Untested", Header: []string{"setting and why"}}
		for _, u := range a.Untested {
			un.Rows = append(un.Rows, []htmlCell{{Text: u}})
		}
		out = append(out, un)
	}
	return out
}

func (t AutotuneTrial) last() AutotuneLook {
	if len(t.Looks) == 0 {
		return AutotuneLook{}
	}
	return t.Looks[len(t.Looks)-1]
}

func ratioCell(l AutotuneLook) string {
	if l.Ratio <= 0 {
		return "-"
	}
	return fmt.Sprintf("×%.3f", l.Ratio)
}

func ciCell(l AutotuneLook) string {
	if !l.HasCI {
		return "-"
	}
	return fmt.Sprintf("[%.3f, %.3f]", l.CILow, l.CIHigh)
}

func (a *Autotune) trajectoryTable() htmlTable {
	t := htmlTable{Header: []string{"#", "phase", "setting", "against", "look (rounds)", "ratio", "interval", "p99", "decision"}}
	for _, tr := range a.Trials {
		for i, l := range tr.Looks {
			dec, p99 := "", ""
			if i == len(tr.Looks)-1 {
				dec, p99 = tr.Decision+": "+tr.Reason, tr.P99
			}
			t.Rows = append(t.Rows, cells([]string{itoa(tr.N), tr.Phase, tr.Setting, tr.Against, itoa(l.Rounds), ratioCell(l), ciCell(l), p99, dec},
				"num", "", "code", "code", "num", "num", "num", "", decisionClass(tr, i == len(tr.Looks)-1)))
		}
	}
	return t
}

func decisionClass(t AutotuneTrial, last bool) string {
	switch {
	case !last:
		return ""
	case t.Decision == "kept":
		return "good"
	case strings.HasPrefix(t.Reason, "it hurts"):
		return "bad"
	}
	return "unclear"
}

// serverTimeSection is the lab's per-run breakdown, one run of the
// baseline against one of the final plan (both from the confirmation).
func (a *Autotune) serverTimeSection() atSection {
	s := atSection{ID: "server-time", Title: "Where the server's time went"}
	var sts []serverTime
	for _, b := range []struct {
		name string
		bd   *labdata.Breakdown
	}{{"baseline", a.Baseline}, {"final plan", a.Plan}} {
		if b.bd != nil {
			sts = append(sts, averageBreakdowns(b.name, "", []*labdata.Breakdown{b.bd}))
		}
	}
	if len(sts) == 0 && len(a.BaselineCommands)+len(a.PlanCommands) == 0 {
		s.Paragraphs = []string{"Not sampled: " + a.BreakdownNote + "."}
		return s
	}
	if len(sts) > 0 {
		s.Paragraphs = []string{"One confirmation run of each, from /proc before and after the run (the lab's per-run breakdown): the server's threads in % of one CPU; its main thread running, waiting for a CPU and asleep; each CPU's time by state and its network work a second."}
		t := htmlTable{Header: serverTimeHeader}
		for _, row := range serverTimeRows(sts, "") {
			t.Rows = append(t.Rows, cells(row, "", "num"))
		}
		s.Tables = []htmlTable{t}
	}
	if t, ok := a.commandTable(); ok {
		s.Tables = append(s.Tables, t)
	}
	return s
}

// commandTable is the server's time by command in the same two runs (INFO
// commandstats after less before): calls and microseconds a call.
func (a *Autotune) commandTable() (htmlTable, bool) {
	t := htmlTable{Title: "Server time by command (INFO commandstats, the same runs)",
		Header: []string{"command", "baseline calls", "baseline µs/call", "plan calls", "plan µs/call"}}
	plan := map[string]AutotuneCommand{}
	for _, c := range a.PlanCommands {
		plan[c.Command] = c
	}
	seen := map[string]bool{}
	row := func(name string, b, p AutotuneCommand) {
		seen[name] = true
		t.Rows = append(t.Rows, cells([]string{name, callsText(b), perCall(b), callsText(p), perCall(p)}, "code", "num", "num", "num", "num"))
	}
	for _, b := range a.BaselineCommands {
		row(b.Command, b, plan[b.Command])
	}
	for _, p := range a.PlanCommands {
		if !seen[p.Command] {
			row(p.Command, AutotuneCommand{}, p)
		}
	}
	return t, len(t.Rows) > 0
}

func callsText(c AutotuneCommand) string {
	if c.Calls == 0 {
		return "-"
	}
	return strconv.FormatInt(c.Calls, 10)
}

func perCall(c AutotuneCommand) string {
	if c.Calls == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", float64(c.Usec)/float64(c.Calls))
}

// WriteAutotuneMarkdown writes the session's report as Markdown.
func WriteAutotuneMarkdown(w io.Writer, a *Autotune) error {
	mw := textsafe.NewWriter(w)
	mw.Printf("# redline autotune\n")
	for _, s := range autotuneDoc(a) {
		mw.Printf("\n## %s\n", s.Title)
		for _, p := range s.Paragraphs {
			if p != "" {
				mw.Printf("\n%s\n", md(p))
			}
		}
		if len(s.List) > 0 {
			mw.Printf("\n")
		}
		for _, l := range s.List {
			mw.Printf("- %s\n", md(l))
		}
		for _, t := range s.Tables {
			if t.Title != "" {
				mw.Printf("\n**%s**\n", md(t.Title))
			}
			if len(t.Rows) == 0 {
				mw.Printf("\nnone\n")
				continue
			}
			var rows [][]string
			align := ""
			for i := range t.Header {
				if len(t.Rows[0]) > i && t.Rows[0][i].Class == "num" {
					align += "r"
				} else {
					align += "l"
				}
			}
			for _, r := range t.Rows {
				row := make([]string, len(r))
				for i, c := range r {
					row[i] = md(c.Text)
				}
				rows = append(rows, row)
			}
			table(mw, align, t.Header, rows)
		}
	}
	return mw.Err()
}

//go:embed autotune.html.tmpl
var autotuneTemplate string

// autotunePage is the autotune page, with the lab report's "table"
// definition and CSS.
var autotunePage = sync.OnceValue(func() *template.Template {
	t := template.Must(template.New("lab").Parse(htmlTemplate))
	return template.Must(t.New("autotune").Parse(autotuneTemplate))
})

// autotuneCSS adds the trajectory chart's line of the gain sought.
const autotuneCSS = "svg .grid.goal { stroke: #1a7f37; stroke-dasharray: 2 3; }\n"

type autotuneHTML struct {
	CSS       template.CSS
	Sections  []atSection
	Chart     template.HTML
	Confirmed bool
}

// WriteAutotuneHTML writes the session's report as one self-contained
// HTML page: the same sections as the Markdown, and the trajectory as an
// inline SVG chart.
func WriteAutotuneHTML(w io.Writer, a *Autotune) error {
	v := autotuneHTML{CSS: template.CSS(htmlCSS + autotuneCSS), Sections: autotuneDoc(a), Chart: template.HTML(trajectoryChart(a)), Confirmed: a.Confirmed}
	if err := autotunePage().ExecuteTemplate(w, "autotune", v); err != nil {
		return fmt.Errorf("render HTML: %w", err)
	}
	return nil
}

// trajectoryChart draws every comparison as a row: each look's ratio and
// interval on one log axis (earlier looks thin and grey above, the
// deciding look below in the decision's colour), with ×1 and the gain
// sought marked.
func trajectoryChart(a *Autotune) string {
	if len(a.Trials) == 0 {
		return ""
	}
	var names []string
	var all []changeRow
	for _, t := range a.Trials {
		names = append(names, textsafe.Printable(fmt.Sprintf("%d %s", t.N, t.Setting)))
		for _, l := range t.Looks {
			v := &Versus{Ratio: l.Ratio, CILow: l.CILow, CIHigh: l.CIHigh, HasCI: l.HasCI}
			all = append(all, changeRow{v: v})
		}
	}
	all = append(all, changeRow{v: &Versus{Ratio: 1 + a.Goal, CILow: 1 + a.Goal, CIHigh: 1 + a.Goal, HasCI: true}})
	left, right, head, foot, step := trajectoryLabelWidth(names), 20.0, 34.0, 24.0, 6.0
	plotW := chartWidth - left - right
	h := head + foot
	for _, t := range a.Trials {
		h += step*float64(len(t.Looks)) + 14
	}
	var c canvas
	c.open(chartWidth, h, "Trajectory of the autotune session: each comparison's ratio against the incumbent and its interval at every look, on a log axis")
	c.text(6, 15, "start", "label title", "Each comparison against the incumbent, look by look")
	c.text(left+plotW, 15, "end", "axis", "better →")
	lo, hi := changeRange(all)
	ax := changeAxis{lo: lo, hi: hi, left: left, width: plotW}
	bottom := h - foot
	for _, t := range factorTicks(lo, hi, plotW) {
		c.line(ax.x(t), head-6, ax.x(t), bottom, "grid")
		c.text(ax.x(t), bottom+14, "middle", "tick", factorTick(t))
	}
	c.line(ax.x(1), head-6, ax.x(1), bottom, "zero")
	if a.Goal > 0 {
		c.line(ax.x(1+a.Goal), head-6, ax.x(1+a.Goal), bottom, "grid goal")
		c.text(ax.x(1+a.Goal), head-8, "middle", "tick", fmt.Sprintf("goal +%.1f%%", 100*a.Goal))
	}
	y := head
	for i, t := range a.Trials {
		rowH := step*float64(len(t.Looks)) + 14
		c.text(left-6, y+rowH/2+4, "end", "label", names[i])
		for j, l := range t.Looks {
			ly := y + 7 + step*float64(j)
			cls := "unclear"
			if j == len(t.Looks)-1 {
				cls = decisionClass(t, true)
			}
			if l.HasCI && l.CILow > 0 {
				c.line(ax.x(l.CILow), ly, ax.x(l.CIHigh), ly, "ci "+cls)
			}
			if l.Ratio > 0 && !math.IsInf(l.Ratio, 0) {
				c.add(`<circle cx="%s" cy="%s" r="2.5" class="point %s"><title>%s</title></circle>`, num(ax.x(l.Ratio)), num(ly), cls,
					esc(textsafe.Printable(fmt.Sprintf("%s, %d rounds: %s %s", t.Setting, l.Rounds, ratioCell(l), ciCell(l)))))
			}
		}
		y += rowH
	}
	return c.String()
}

// trajectoryLabelWidth is labelWidth with room for a knob = value label
// (up to half the chart).
func trajectoryLabelWidth(labels []string) float64 {
	n := 0
	for _, l := range labels {
		n = max(n, len([]rune(l)))
	}
	return math.Min(math.Max(float64(n)*6.6+12, 80), chartWidth/2)
}
