package doctor

import (
	"io"
	"strings"

	"redline/internal/textsafe"
)

// WriteMarkdown writes the report as Markdown: a summary, then one section
// per fired finding with an evidence table and the fix and undo as shell
// blocks, then tables of the rules that did not run or did not apply.
func WriteMarkdown(w io.Writer, r *Report, o RenderOptions) error {
	mw := textsafe.NewWriter(w)
	mw.Printf("# redline doctor\n\n")
	mw.Printf("Target: %s.\n\n", md(r.Target.describe()))
	mw.Printf("Summary: %s.\n", md(r.Summarize().line()))
	if len(r.Nodes) > 0 {
		mw.Printf("\n## Nodes\n\n")
		for _, n := range r.Nodes {
			mw.Printf("- %s\n", md(n.describe()))
		}
	}
	h := "##"
	if len(r.Nodes) > 0 {
		h = "###"
	}
	for _, g := range r.groups() {
		var body strings.Builder
		writeMarkdownBody(textsafe.NewWriter(&body), g.rep, o, h)
		if g.title != "" && (body.Len() > 0 || g.unread) {
			mw.Printf("\n## %s\n", md(strings.ToUpper(g.title[:1])+g.title[1:]))
		}
		mw.Printf("%s", body.String())
	}
	return mw.Err()
}

// writeMarkdownBody writes one group's findings under headings of level h.
func writeMarkdownBody(mw *textsafe.Writer, r *Report, o RenderOptions, h string) {
	for sev := High; sev >= o.MinSeverity; sev-- {
		fs := r.bySeverity(sev)
		if len(fs) == 0 {
			continue
		}
		name := sev.String()
		mw.Printf("\n%s %s\n", h, strings.ToUpper(name[:1])+name[1:])
		for _, f := range fs {
			writeMarkdownFinding(mw, f, r.Target.Redis, h+"#")
		}
	}
	for _, refused := range []bool{false, true} {
		if es := r.readErrors(refused); len(es) > 0 {
			mw.Printf("\n%s %s\n\n", h, readErrorsTitle[refused])
			for _, e := range es {
				mw.Printf("- %s\n", md(readErrorText(e)))
			}
		}
	}
	for _, st := range []Status{Errored, NotChecked, NotApplicable} {
		writeMarkdownTable(mw, h, statusTitle[st], r.byStatus(st), func(f Finding) string { return f.Reason })
	}
	if o.Verbose {
		writeMarkdownTable(mw, h, "OK", r.byStatus(OK), func(f Finding) string { return f.Message })
	}
}

func writeMarkdownFinding(mw *textsafe.Writer, f Finding, addr, h string) {
	mw.Printf("\n%s %s: %s\n\n%s\n\n*Why:* %s (%s)\n", h, code(f.ID), md(f.Title), md(f.Message), md(f.Why), md(f.Source))
	if len(f.Evidence) > 0 {
		mw.Printf("\n| source | value | note |\n|---|---|---|\n")
		for _, e := range f.Evidence {
			mw.Printf("| %s | %s | %s |\n", code(e.Source), code(e.shown()), md(e.Note))
		}
	}
	for _, n := range f.Notes {
		mw.Printf("\n> Note: %s\n", md(n))
	}
	if f.Fix == nil {
		return
	}
	fx := f.Fix
	if fx.Caution != "" {
		mw.Printf("\n**Caution:** %s\n", md(fx.Caution))
	}
	if len(fx.Changes) > 0 {
		var lines []string
		for _, c := range fx.Changes {
			lines = append(lines, Command(c, addr))
		}
		mw.Printf("\nFix%s:\n", md(fx.needs()))
		writeShellBlock(mw, lines)
	}
	for _, a := range fx.Advice {
		mw.Printf("\n- %s\n", md(a))
	}
	if len(fx.Undo) > 0 {
		var lines []string
		for _, c := range fx.Undo {
			lines = append(lines, UndoCommand(c, addr))
		}
		mw.Printf("\nUndo:\n")
		writeShellBlock(mw, lines)
	}
	if len(fx.Persist) > 0 {
		mw.Printf("\nPersist:\n")
		writeShellBlock(mw, fx.Persist)
	}
}

// writeShellBlock writes lines as a sh code block whose fence no line can
// close (a value with backticks in a command).
func writeShellBlock(mw *textsafe.Writer, lines []string) {
	fence := textsafe.MarkdownFence(lines...)
	mw.Printf("\n%ssh\n%s\n%s\n", fence, strings.Join(lines, "\n"), fence)
}

func writeMarkdownTable(mw *textsafe.Writer, h, title string, fs []Finding, text func(Finding) string) {
	if len(fs) == 0 {
		return
	}
	mw.Printf("\n%s %s (%d)\n\n| rule | |\n|---|---|\n", h, title, len(fs))
	for _, f := range fs {
		mw.Printf("| %s | %s |\n", code(f.ID), md(text(f)))
	}
}

// md and code are the one escaping of Markdown text and of code spans
// (textsafe): what a host, a server or a fixture tree said (a CONFIG
// value, a path, an error) shows as text, adding no HTML, link, code span
// or table column.
var md, code = textsafe.MarkdownText, textsafe.MarkdownCode
