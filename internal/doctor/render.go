package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"redline/internal/host"
	"redline/internal/textsafe"
)

// RenderOptions controls the human and Markdown reports.
type RenderOptions struct {
	// MinSeverity hides fired findings below it (they are counted).
	MinSeverity Severity
	// Verbose also lists the rules that passed, with what they checked.
	Verbose bool
}

// SchemaVersion is the version of the JSON report.
const SchemaVersion = 1

// Summary counts a report's findings.
type Summary struct {
	Fired         map[string]int `json:"fired"` // by severity name
	OK            int            `json:"ok"`
	NotApplicable int            `json:"not_applicable"`
	NotChecked    int            `json:"not_checked"`
	Errors        int            `json:"errors"`
	// ReadErrors counts the files the host snapshot could not read or
	// parse (Report.ReadErrors), Refused those of them the kernel refused
	// to this user (permission denied: not an error of the host; the
	// rules that read them say not checked).
	ReadErrors int `json:"read_errors,omitempty"`
	Refused    int `json:"refused,omitempty"`
	// NodeErrors counts the cluster nodes that could not be read.
	NodeErrors int `json:"node_errors,omitempty"`
	Rules      int `json:"rules"`
}

// Summarize counts r's findings.
func (r *Report) Summarize() Summary {
	s := Summary{Fired: map[string]int{}, NodeErrors: len(r.nodeErrors())}
	for _, e := range r.ReadErrors {
		if e.Refused() {
			s.Refused++
		} else {
			s.ReadErrors++
		}
	}
	ids := map[string]bool{}
	for _, f := range r.Findings {
		if !ids[f.ID] {
			ids[f.ID] = true
			s.Rules++
		}
		switch f.Status {
		case Fired:
			s.Fired[f.Severity.String()]++
		case OK:
			s.OK++
		case NotApplicable:
			s.NotApplicable++
		case NotChecked:
			s.NotChecked++
		case Errored:
			s.Errors++
		}
	}
	return s
}

func (s Summary) line() string {
	var parts []string
	for sev := High; sev >= Info; sev-- {
		parts = append(parts, fmt.Sprintf("%d %s", s.Fired[sev.String()], sev))
	}
	line := fmt.Sprintf("%s; %d ok, %d not applicable, %d not checked, %d errors (%d rules)",
		strings.Join(parts, ", "), s.OK, s.NotApplicable, s.NotChecked, s.Errors, s.Rules)
	if s.ReadErrors > 0 {
		line += fmt.Sprintf("; %d error(s) reading the host", s.ReadErrors)
	}
	if s.Refused > 0 {
		line += fmt.Sprintf("; %d file(s) refused: permission denied (run as root)", s.Refused)
	}
	if s.NodeErrors > 0 {
		line += fmt.Sprintf("; %d cluster node(s) could not be read", s.NodeErrors)
	}
	return line
}

// HasErrors reports whether a rule errored, the host snapshot could not
// read or parse a file, or a cluster node could not be read: the report is
// then incomplete, whatever fired. A file the kernel refused to this user
// is not an error: the rules that read it say not checked (permission
// denied, run as root).
func (r *Report) HasErrors() bool {
	s := r.Summarize()
	return s.ReadErrors > 0 || s.NodeErrors > 0 || len(r.byStatus(Errored)) > 0
}

var readErrorsTitle = map[bool]string{false: "Errors reading the host", true: "Files refused to this user (permission denied: run as root)"}

// readErrors returns the read errors that are refusals, or the others.
func (r *Report) readErrors(refused bool) []host.SourceError {
	var out []host.SourceError
	for _, e := range r.ReadErrors {
		if e.Refused() == refused {
			out = append(out, e)
		}
	}
	return out
}

// nodeErrors are the cluster nodes that could not be read.
func (r *Report) nodeErrors() []Node {
	var out []Node
	for _, n := range r.Nodes {
		if n.Error != "" {
			out = append(out, n)
		}
	}
	return out
}

// readErrorText is one host read error for the reports.
func readErrorText(e host.SourceError) string {
	s := e.Source + ": "
	if e.Path != "" {
		s += e.Path
		if e.Line > 0 {
			s += fmt.Sprintf(" line %d", e.Line)
		}
		s += ": "
	}
	return s + e.Error
}

// WriteJSON writes the report as JSON: every rule's finding, with its
// status, evidence and fix.
func WriteJSON(w io.Writer, r *Report) error {
	doc := struct {
		Schema     int                `json:"schema"`
		Target     Target             `json:"target"`
		Summary    Summary            `json:"summary"`
		ReadErrors []host.SourceError `json:"read_errors,omitempty"`
		Nodes      []Node             `json:"nodes,omitempty"`
		Servers    []ServerSeen       `json:"servers,omitempty"`
		Findings   []Finding          `json:"findings"`
	}{SchemaVersion, r.Target, r.Summarize(), r.ReadErrors, r.Nodes, r.Servers, r.Findings}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// WriteText writes the human report: fired findings grouped by severity;
// with several redis-servers, each with what was judged of it; then the
// rules that could not check or do not apply. Brief by default (each
// finding in two lines, the skipped rules in one line: render_brief.go);
// o.Verbose adds each finding's evidence, why, undo and persistence and
// lists every skipped rule and the rules that passed.
func WriteText(w io.Writer, r *Report, o RenderOptions) error {
	tw := textsafe.NewWriter(w)
	tw.Printf("redline doctor: %s\n", r.Target.describe())
	tw.Printf("%s\n", r.Summarize().line())
	if len(r.Nodes) > 0 {
		tw.Printf("\nNodes (%d):\n", len(r.Nodes))
		for _, n := range r.Nodes {
			tw.Printf("  %s\n", n.describe())
		}
	}
	for _, g := range r.groups() {
		var body strings.Builder
		writeTextBody(textsafe.NewWriter(&body), g.rep, o)
		if g.title != "" && (body.Len() > 0 || g.unread) {
			tw.Printf("\n=== %s ===\n", g.title)
		}
		tw.Printf("%s", body.String())
	}
	return tw.Err()
}

func writeTextBody(tw *textsafe.Writer, r *Report, o RenderOptions) {
	for sev := High; sev >= o.MinSeverity; sev-- {
		fs := r.bySeverity(sev)
		if len(fs) == 0 {
			continue
		}
		tw.Printf("\n%s (%d)\n", strings.ToUpper(sev.String()), len(fs))
		if !o.Verbose {
			writeBriefFindings(tw, fs, r.Target.Redis)
			continue
		}
		for _, f := range fs {
			writeTextFinding(tw, f, r.Target.Redis)
		}
	}
	if n := len(r.Fired(Info)) - len(r.Fired(o.MinSeverity)); n > 0 {
		tw.Printf("\n%d finding(s) below --min-severity %s not shown.\n", n, o.MinSeverity)
	}
	writeTextOthers(tw, r, o)
}

func writeTextFinding(tw *textsafe.Writer, f Finding, addr string) {
	tw.Printf("\n  [%s] %s\n", f.ID, f.Title)
	tw.Printf("    %s\n", f.Message)
	tw.Printf("    why: %s [%s]\n", f.Why, f.Source)
	if len(f.Evidence) > 0 {
		tw.Printf("    evidence:\n")
		for _, e := range f.Evidence {
			tw.Printf("      %s\n", e.text())
		}
	}
	for _, n := range f.Notes {
		tw.Printf("    note: %s\n", n)
	}
	if f.Fix == nil {
		return
	}
	fx := f.Fix
	if fx.Caution != "" {
		tw.Printf("    caution: %s\n", fx.Caution)
	}
	if len(fx.Changes) > 0 {
		tw.Printf("    fix%s:\n", fx.needs())
		for _, c := range fx.Changes {
			tw.Printf("      %s\n", Command(c, addr))
		}
	}
	for _, a := range fx.Advice {
		tw.Printf("    advice: %s\n", a)
	}
	if len(fx.Changes) == 0 && fx.needs() != "" {
		tw.Printf("    (the advice%s)\n", fx.needs())
	}
	if len(fx.Undo) > 0 {
		tw.Printf("    undo:\n")
		for _, c := range fx.Undo {
			tw.Printf("      %s\n", UndoCommand(c, addr))
		}
	}
	for _, p := range fx.Persist {
		tw.Printf("    persist: %s\n", p)
	}
}

func writeTextOthers(tw *textsafe.Writer, r *Report, o RenderOptions) {
	for _, refused := range []bool{false, true} {
		if es := r.readErrors(refused); len(es) > 0 {
			tw.Printf("\n%s (%d):\n", readErrorsTitle[refused], len(es))
			for _, e := range es {
				tw.Printf("  %s\n", readErrorText(e))
			}
		}
	}
	writeServers(tw, r, o.Verbose)
	statuses := []Status{Errored, NotChecked, NotApplicable}
	if !o.Verbose {
		statuses = statuses[:1]
		defer writeSkipped(tw, r)
	}
	for _, st := range statuses {
		fs := r.byStatus(st)
		if len(fs) == 0 {
			continue
		}
		tw.Printf("\n%s (%d):\n", statusTitle[st], len(fs))
		for _, f := range fs {
			tw.Printf("  %-24s %s\n", f.ID, f.Reason)
		}
	}
	if o.Verbose {
		fs := r.byStatus(OK)
		tw.Printf("\nOK (%d):\n", len(fs))
		for _, f := range fs {
			tw.Printf("  %-24s %s\n", f.ID, f.Message)
		}
	}
}

var statusTitle = map[Status]string{
	Errored:       "Errors",
	NotChecked:    "Not checked",
	NotApplicable: "Not applicable",
	OK:            "OK",
	Fired:         "Fired",
}

// Text is the evidence as every report prints it: "SOURCE = VALUE
// (note)", an empty value as "" and a missing one as (absent).
func (e Evidence) Text() string { return e.text() }

func (e Evidence) text() string {
	s := e.Source + " = " + e.shown()
	if e.Absent {
		s = e.Source + " (absent)"
	}
	if e.Note != "" {
		s += "  (" + e.Note + ")"
	}
	return s
}

// shown is the value as the reports print it: "(absent)" when there is
// none, `""` when it is empty.
func (e Evidence) shown() string {
	switch {
	case e.Absent:
		return "(absent)"
	case e.Value == "":
		return `""`
	}
	return e.Value
}

func (fx *Fix) needs() string {
	var n []string
	if fx.NeedsRoot {
		n = append(n, "root")
	}
	if fx.NeedsRedisRestart {
		n = append(n, "a Redis restart")
	}
	if fx.NeedsReboot {
		n = append(n, "a reboot")
	}
	if len(n) == 0 {
		return ""
	}
	return " (needs " + strings.Join(n, ", ") + ")"
}

func (t Target) describe() string {
	var b strings.Builder
	switch {
	case t.Live:
		b.WriteString("this host")
	default:
		b.WriteString("fixture tree " + t.Root)
	}
	if t.Cluster {
		fmt.Fprintf(&b, ", Redis Cluster through the seed %s", t.Redis)
	} else if t.Redis != "" {
		fmt.Fprintf(&b, ", Redis %s at %s", t.Version, t.Redis)
		if t.Local {
			fmt.Fprintf(&b, " (pid %d, local)", t.Pid)
		} else {
			b.WriteString(" (not on this host)")
		}
	} else if t.RedisNote != "" {
		b.WriteString(", Redis not checked: " + t.RedisNote)
	}
	if t.Interval != "" {
		b.WriteString(", counters sampled over " + t.Interval)
	}
	return b.String()
}

func (r *Report) bySeverity(s Severity) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Status == Fired && f.Severity == s {
			out = append(out, f)
		}
	}
	return out
}

func (r *Report) byStatus(s Status) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Status == s {
			out = append(out, f)
		}
	}
	return out
}

// group is a part of a cluster report: the host, the cluster, or one
// node, with its findings as a report of their own.
type group struct {
	title string
	rep   *Report
	// unread is a node that could not be read: its title, which says
	// why, is shown even when no finding is (a group that shows nothing
	// else is left out, as with --rule).
	unread bool
}

// groups splits a cluster report into the host's findings, the cluster's
// and each node's, in Report.Nodes order; a single server's report is one
// untitled group.
func (r *Report) groups() []group {
	if len(r.Nodes) == 0 {
		return []group{{rep: r}}
	}
	sub := func(target string, keep func(Finding) bool) *Report {
		s := &Report{Target: r.Target}
		s.Target.Redis = target
		for _, f := range r.Findings {
			if keep(f) {
				s.Findings = append(s.Findings, f)
			}
		}
		return s
	}
	hostRep := sub(r.Target.Redis, func(f Finding) bool { return f.Node == "" && f.Section != "cluster" })
	hostRep.ReadErrors = r.ReadErrors
	out := []group{
		{title: "host", rep: hostRep},
		{title: "cluster", rep: sub(r.Target.Redis, func(f Finding) bool { return f.Node == "" && f.Section == "cluster" })},
	}
	for _, n := range r.Nodes {
		title := "node " + n.Label()
		if n.Error != "" {
			title += ": NOT READ: " + n.Error
		}
		out = append(out, group{title, sub(n.Addr, func(f Finding) bool { return f.Node == n.Addr }), n.Error != ""})
	}
	return out
}

// describe is one line of the node list.
func (n Node) describe() string {
	s := n.Label()
	if n.Seed {
		s += " seed"
	}
	if n.Error != "" {
		return s + ": could not be read: " + n.Error
	}
	if n.Version != "" {
		s += ", Redis " + n.Version
	}
	if n.Local {
		return s + fmt.Sprintf(", pid %d on this host", n.Pid)
	}
	return s + ", on another host"
}
