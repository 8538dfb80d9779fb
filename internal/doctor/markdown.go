package doctor

import (
	"io"
	"strings"
)

// WriteMarkdown writes the report as Markdown: a summary, then one section
// per fired finding with an evidence table and the fix and undo as shell
// blocks, then tables of the rules that did not run or did not apply.
func WriteMarkdown(w io.Writer, r *Report, o RenderOptions) error {
	mw := &errWriter{w: w}
	mw.printf("# redline doctor\n\n")
	mw.printf("Target: %s.\n\n", r.Target.describe())
	mw.printf("Summary: %s.\n", r.Summarize().line())
	if len(r.Nodes) > 0 {
		mw.printf("\n## Nodes\n\n")
		for _, n := range r.Nodes {
			mw.printf("- %s\n", mdEscape(n.describe()))
		}
	}
	h := "##"
	if len(r.Nodes) > 0 {
		h = "###"
	}
	for _, g := range r.groups() {
		var body strings.Builder
		writeMarkdownBody(&errWriter{w: &body}, g.rep, o, h)
		if g.title != "" && (body.Len() > 0 || g.unread) {
			mw.printf("\n## %s\n", mdEscape(strings.ToUpper(g.title[:1])+g.title[1:]))
		}
		mw.printf("%s", body.String())
	}
	return mw.err
}

// writeMarkdownBody writes one group's findings under headings of level h.
func writeMarkdownBody(mw *errWriter, r *Report, o RenderOptions, h string) {
	for sev := High; sev >= o.MinSeverity; sev-- {
		fs := r.bySeverity(sev)
		if len(fs) == 0 {
			continue
		}
		name := sev.String()
		mw.printf("\n%s %s\n", h, strings.ToUpper(name[:1])+name[1:])
		for _, f := range fs {
			writeMarkdownFinding(mw, f, r.Target.Redis, h+"#")
		}
	}
	for _, refused := range []bool{false, true} {
		if es := r.readErrors(refused); len(es) > 0 {
			mw.printf("\n%s %s\n\n", h, readErrorsTitle[refused])
			for _, e := range es {
				mw.printf("- %s\n", readErrorText(e))
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

func writeMarkdownFinding(mw *errWriter, f Finding, addr, h string) {
	mw.printf("\n%s `%s`: %s\n\n%s\n\n*Why:* %s (%s)\n", h, f.ID, mdEscape(f.Title), mdEscape(f.Message), mdEscape(f.Why), mdEscape(f.Source))
	if len(f.Evidence) > 0 {
		mw.printf("\n| source | value | note |\n|---|---|---|\n")
		for _, e := range f.Evidence {
			mw.printf("| `%s` | `%s` | %s |\n", e.Source, e.shown(), mdEscape(e.Note))
		}
	}
	for _, n := range f.Notes {
		mw.printf("\n> Note: %s\n", mdEscape(n))
	}
	if f.Fix == nil {
		return
	}
	fx := f.Fix
	if fx.Caution != "" {
		mw.printf("\n**Caution:** %s\n", mdEscape(fx.Caution))
	}
	if len(fx.Changes) > 0 {
		mw.printf("\nFix%s:\n\n```sh\n", fx.needs())
		for _, c := range fx.Changes {
			mw.printf("%s\n", Command(c, addr))
		}
		mw.printf("```\n")
	}
	for _, a := range fx.Advice {
		mw.printf("\n- %s\n", mdEscape(a))
	}
	if len(fx.Undo) > 0 {
		mw.printf("\nUndo:\n\n```sh\n")
		for _, c := range fx.Undo {
			mw.printf("%s\n", UndoCommand(c, addr))
		}
		mw.printf("```\n")
	}
	if len(fx.Persist) > 0 {
		mw.printf("\nPersist:\n\n```sh\n%s\n```\n", strings.Join(fx.Persist, "\n"))
	}
}

func writeMarkdownTable(mw *errWriter, h, title string, fs []Finding, text func(Finding) string) {
	if len(fs) == 0 {
		return
	}
	mw.printf("\n%s %s (%d)\n\n| rule | |\n|---|---|\n", h, title, len(fs))
	for _, f := range fs {
		mw.printf("| `%s` | %s |\n", f.ID, mdEscape(text(f)))
	}
}

// mdEscape keeps table cells and text from breaking the Markdown.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "*", `\*`, "_", `\_`).Replace(s)
}
