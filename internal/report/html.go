package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"redline/internal/labdata"
)

//go:embed report.html.tmpl
var htmlTemplate string

//go:embed report.css
var htmlCSS string

// page is the report's template, parsed on first use (every redline
// command would pay for it at start-up).
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Parse(htmlTemplate))
})

// WriteHTML writes the report as one self-contained HTML file: inline CSS,
// charts as inline SVG, no scripts and no references outside the file, so
// it opens offline and can be mailed or archived as is.
func WriteHTML(w io.Writer, r *Report) error {
	if err := page().Execute(w, newHTMLView(r)); err != nil {
		return fmt.Errorf("render HTML: %w", err)
	}
	return nil
}

// htmlView is everything the template prints, already formatted.
type htmlView struct {
	Title, Description, Dimension, Reference, HowToRead string
	ScratchWords                                        string
	CSS                                                 template.CSS
	Notes                                               []template.HTML
	Summary                                             []htmlTable
	Lab                                                 bool
	Host, Target                                        [][2]string
	HostNotes                                           []string
	HostTitle                                           string
	ServerHost                                          [][2]string
	ServerHostNotes, RemoteCleanup                      []string
	Findings                                            []htmlSeverity
	Variants                                            []htmlVariant
	Workloads                                           []htmlWorkload
	Runs                                                htmlTable
	Inputs                                              []htmlInput
	Servers, Clients                                    []string
	Sweeps                                              []template.HTML
	ServerTime                                          []htmlTable
	ServerTimeIntro, ProfileIntro                       string
	Connect                                             []htmlTable
	ConnectIntro                                        string
	Profiles                                            []htmlProfile
}

// htmlProfile is one profiled run: its top functions, its moves against
// the baseline, and its flame graphs embedded.
type htmlProfile struct {
	Workload, Variant, Headline string
	Preempted                   string
	NewWorkload                 bool
	Top, Moves                  htmlTable
	BaseSeq                     int
	Flame, DiffFlame            htmlSVG
}

// htmlSVG is a flame graph embedded as its own document (an iframe's
// srcdoc, sandboxed): its style stays its own, its hover titles work, and
// the report still loads nothing from anywhere.
type htmlSVG struct {
	Doc    string
	Height int
}

// htmlTable is a table of text cells; Class styles a cell ("num", "good").
type htmlTable struct {
	Title  string
	Header []string
	Rows   [][]htmlCell
}

type htmlCell struct{ Text, Class string }

type htmlSeverity struct {
	Name     string
	Findings []labdata.Finding
}

type htmlVariant struct {
	Name, Description, RolledBack string
	Reference, Warn               bool
	Plan                          htmlTable
	Server                        string
	Notes                         []string
}

type htmlWorkload struct {
	Name, ID    string
	Commands    []string
	Throughput  template.HTML
	Change      template.HTML
	Percentiles template.HTML
	Series      template.HTML
	Outages     template.HTML
	Curves      template.HTML
	Tables      []htmlTable
}

type htmlInput struct {
	Title string
	Rows  [][2]string
}

func newHTMLView(r *Report) *htmlView {
	v := &htmlView{Title: r.Title, Dimension: r.Dimension, Reference: r.Reference, HowToRead: howToRead, ScratchWords: scratchWords,
		CSS: template.CSS(htmlCSS), Lab: r.Lab != nil}
	for _, n := range r.Notes {
		v.Notes = append(v.Notes, codeSpans(n))
	}
	v.Summary = summaryTables(r)
	if r.Lab != nil {
		v.labContext(r)
		v.connect(r)
		v.serverTime(r)
	}
	for i, w := range r.Workloads {
		v.Workloads = append(v.Workloads, workloadView(r, w, i))
	}
	v.Runs = runsTable(r)
	for _, in := range r.Inputs {
		v.Inputs = append(v.Inputs, inputView(in, r.Lab == nil))
	}
	v.Servers, v.Clients = serverSeen(r)
	for _, sw := range sweeps(r) {
		for m := range sweepMetrics {
			v.Sweeps = append(v.Sweeps, template.HTML(sweepChart(r, sw, m)))
		}
	}
	return v
}

func (v *htmlView) labContext(r *Report) {
	res := r.Lab
	v.Description = res.Scenario.Description
	v.Host, v.HostNotes, v.Target = hostRows(res.Host), res.Host.Notes, targetRows(res)
	v.HostTitle, v.RemoteCleanup = hostTitle(res), remoteCleanupLines(res.RemoteCleanup)
	if sh := res.ServerHost; sh != nil {
		v.ServerHost, v.ServerHostNotes = hostRows(*sh), sh.Notes
	}
	order, by := findingsBySeverity(res.Findings)
	for _, sev := range order {
		v.Findings = append(v.Findings, htmlSeverity{Name: sev, Findings: by[sev]})
	}
	for _, vi := range res.Variants {
		v.Variants = append(v.Variants, variantView(vi, r.Reference))
	}
}

func variantView(vi labdata.VariantInfo, ref string) htmlVariant {
	hv := htmlVariant{Name: vi.Name, Description: vi.Description, Reference: vi.Name == ref,
		RolledBack: rolledBack(vi), Server: strings.Join(vi.Server, "; "), Notes: append(steerLines(vi), vi.Notes...)}
	hv.Warn = len(vi.Plan) > 0 && !vi.RolledBack
	hv.Plan.Header = planHeader
	for i, st := range vi.Plan {
		hv.Plan.Rows = append(hv.Plan.Rows, cells(planRow(i, st), "num", "", "code", "code", "", "", "status-"+st.Status, ""))
	}
	return hv
}

// cells pairs texts with classes; missing classes are "".
func cells(texts []string, classes ...string) []htmlCell {
	out := make([]htmlCell, len(texts))
	for i, t := range texts {
		out[i].Text = t
		if i < len(classes) {
			out[i].Class = classes[i]
		}
	}
	return out
}

func summaryTables(r *Report) []htmlTable {
	var ts []htmlTable
	for _, m := range shownMetrics(r) {
		t := htmlTable{Title: m.Title + ", median of the runs", Header: append([]string{"workload"}, r.Labels...)}
		for _, w := range r.Workloads {
			row := []htmlCell{{Text: w.Name}}
			for _, l := range r.Labels {
				row = append(row, summaryHTMLCell(w.Group(l), m))
			}
			t.Rows = append(t.Rows, row)
		}
		ts = append(ts, t)
	}
	return ts
}

func summaryHTMLCell(g *Group, m metric) htmlCell {
	if !m.has(g) {
		return htmlCell{Text: "n/a", Class: "num"}
	}
	c := htmlCell{Text: m.format(m.spread(g).Median), Class: "num"}
	if v := m.versus(g); v != nil {
		c.Text += " " + fmtBrief(v)
		c.Class += " " + verdictClass(v)
	}
	return c
}

func workloadView(r *Report, w *Workload, i int) htmlWorkload {
	hw := htmlWorkload{Name: w.Name, Commands: w.Commands, ID: fmt.Sprintf("w%d", i+1),
		Throughput:  template.HTML(throughputChart(r, w)),
		Change:      template.HTML(changeChart(r, w)),
		Percentiles: template.HTML(percentileChart(r, w)),
		Series:      template.HTML(seriesChart(r, w)),
		Outages:     template.HTML(outageChart(r, w)),
		Curves:      template.HTML(curveChart(r, w))}
	if rows := capacityRows(r, w); len(rows) > 0 {
		t := htmlTable{Title: "Capacity at the latency target (bench --slo): the rate at which a step holds the targets half the time, 95% credible interval", Header: capacityHeader}
		for _, row := range rows {
			t.Rows = append(t.Rows, cells(row, "", "", "num", "num", "num", "num"))
		}
		hw.Tables = append(hw.Tables, t)
	}
	header := []string{r.Dimension, "runs", "median", "min..max", "spread", "ratio [CI]", "verdict"}
	for _, m := range shownMetrics(r) {
		t := htmlTable{Title: m.Title, Header: header}
		for _, row := range metricRows(w, m, r.markComputed) {
			t.Rows = append(t.Rows, cells(row, "", "num", "num", "num", "num", "num", ""))
		}
		markVerdicts(t.Rows, w, m)
		hw.Tables = append(hw.Tables, t)
	}
	pt := htmlTable{Title: "Latency percentiles (ms), from the HDR histograms of each group's runs merged into one", Header: percentileHeader(r.Dimension)}
	for _, row := range percentileRows(w) {
		pt.Rows = append(pt.Rows, cells(row, "", "num", "num", "num", "num", "num", "num", "num", "num", "num", "num"))
	}
	hw.Tables = append(hw.Tables, pt)
	return hw
}

// markVerdicts colours the verdict column.
func markVerdicts(rows [][]htmlCell, w *Workload, m metric) {
	for i, g := range w.Groups {
		rows[i][len(rows[i])-1].Class = verdictClass(m.versus(g))
	}
}

func runsTable(r *Report) htmlTable {
	cols := runColumns(r)
	t := htmlTable{}
	for _, c := range cols {
		t.Header = append(t.Header, c.header)
	}
	for _, s := range r.Runs {
		row := make([]htmlCell, len(cols))
		for i, c := range cols {
			row[i] = htmlCell{Text: c.value(s), Class: map[byte]string{'r': "num"}[c.align]}
		}
		if s.Problem != "" {
			row[len(row)-1].Class = "bad"
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func inputView(in InputInfo, merged bool) htmlInput {
	title := orDefault(in.File, "(result)")
	if in.Label != "" {
		title += " = " + in.Label
	}
	title += fmt.Sprintf(" (%s, %s): %s, %s", in.Kind, in.Schema, runsWord(in.Runs), completeness(in))
	return htmlInput{Title: title, Rows: present([][2]string{
		{"command", shellJoin(in.CommandLine)}, {"redline", in.Redline},
		{"started", fmtTimeOpt(in.Started)}, {"finished", finished(in)},
		{"host", hostLine(in)}, {"server", in.ServerVersion}, {"target", in.Target}, {"error", in.Error},
		{"findings and plans", labDetails(in, merged)},
	})}
}

// codeSpans escapes s and shows its `backticked` parts as code, as the
// Markdown does.
func codeSpans(s string) template.HTML {
	parts := strings.Split(template.HTMLEscapeString(s), "`")
	if len(parts)%2 == 0 { // unbalanced: leave the backticks as they are
		return template.HTML(template.HTMLEscapeString(s))
	}
	var b strings.Builder
	for i, p := range parts {
		if i%2 == 1 {
			p = "<code>" + p + "</code>"
		}
		b.WriteString(p)
	}
	return template.HTML(b.String())
}

func (v *htmlView) serverTime(r *Report) {
	sts := serverTimes(r.Lab)
	for _, w := range workloadOrder(sts) {
		t := htmlTable{Title: w, Header: serverTimeHeader}
		for _, row := range serverTimeRows(sts, w) {
			t.Rows = append(t.Rows, cells(row, "", "num"))
		}
		v.ServerTime = append(v.ServerTime, t)
	}
	if len(sts) > 0 {
		v.ServerTimeIntro = serverTimeIntro
	}
	workload := ""
	for _, pv := range profileViews(r.Lab) {
		hp := htmlProfile{Workload: pv.Workload, Variant: pv.Variant, Headline: pv.headline(), Preempted: pv.Preempted, NewWorkload: pv.Workload != workload,
			BaseSeq: pv.BaseSeq, Top: htmlTable{Header: profileTopHeader}, Moves: htmlTable{Header: profileMoveHeader}}
		workload = pv.Workload
		for _, row := range pv.Top {
			hp.Top.Rows = append(hp.Top.Rows, cells(row, "num", "", "num", "", "num"))
		}
		for _, row := range pv.Moves {
			hp.Moves.Rows = append(hp.Moves.Rows, cells(row, "", "", "num", "num", "num"))
		}
		hp.Flame = embedSVG(r.resultDir, pv.Flame)
		hp.DiffFlame = embedSVG(r.resultDir, pv.DiffFlame)
		v.Profiles = append(v.Profiles, hp)
	}
	if len(v.Profiles) > 0 {
		v.ProfileIntro = profileIntro
	}
}

func embedSVG(dir, rel string) htmlSVG {
	doc := inlineSVG(dir, rel)
	h := 600
	if m := svgHeight.FindStringSubmatch(doc); m != nil {
		h, _ = strconv.Atoi(m[1])
	}
	return htmlSVG{Doc: doc, Height: h + 20}
}

var svgHeight = regexp.MustCompile(`<svg[^>]*\sheight="(\d+)"`)
