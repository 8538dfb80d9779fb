package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"redline/internal/autotune"
	"redline/internal/stats"
	"redline/internal/textsafe"
)

// objectiveText says what the session measures and what its ratios mean.
func objectiveText(o *autotuneOptions) string {
	if o.target.Objective == "p99" {
		return "p99 latency (ratios are gains: x1.10 is a p99 1.10 times lower)"
	}
	return "throughput (ratios are of requests/s)"
}

func autotunePrintPlan(w io.Writer, o *autotuneOptions, p autotune.Plan, per time.Duration) {
	fmt.Fprintf(w, "autotune: %s of `%s`\n", objectiveText(o), o.target.Workload)
	fmt.Fprintf(w, "plan: %d candidate values, at most %d comparisons; each keep decision at %.4f%% two-sided (alpha %.0f%% over the session: Bonferroni over %d comparisons x %d looks at rounds %v)\n",
		p.Screening, p.Comparisons, 100*p.Design.Level(), 100*p.Design.Alpha, p.Design.Comparisons, p.Design.Looks, p.Looks)
	worst := time.Duration(p.MaxMeasurements) * per
	fmt.Fprintf(w, "estimate: at most %d measurements of about %s (%s); budget %s (%d measurements)\n",
		p.MaxMeasurements, per.Round(100*time.Millisecond), worst.Round(time.Second), o.budget, o.engine.MaxMeasurements)
}

func autotunePrintTrial(w io.Writer, t autotune.Trial) {
	fmt.Fprintf(w, "  %2d %-6s %-45s %s after %d rounds: %s\n", t.N, t.Phase, textsafe.Printable(t.Setting.Knob+" = "+t.Setting.Value), ratioText(t.Result), t.Rounds, t.Decision)
}

func ratioText(c stats.Comparison) string {
	if !c.HasCI {
		return fmt.Sprintf("x%.3f", c.Ratio)
	}
	return fmt.Sprintf("x%.3f [%.3f, %.3f]", c.Ratio, c.CILow, c.CIHigh)
}

// autotunePrintAnswer is the one terminal answer: kept, rejected,
// untested, the confirmation and the files.
func autotunePrintAnswer(w io.Writer, o *autotuneOptions, res *autotune.Result, untested []string, planPath string) {
	n := res.Noise
	if n.Rounds == 0 {
		fmt.Fprintln(w, "\nnoise: not measured (the session stopped first)")
	} else {
		fmt.Fprintf(w, "\nnoise: %d rounds of the baseline against itself: paired spread %.1f%%, smallest gain detectable with 95%% power: %.1f%%\n", n.Rounds, 100*n.Sigma, 100*n.Detectable)
	}
	fmt.Fprintln(w, "kept:")
	for _, s := range res.Final {
		if t := keptTrial(res, s); t != nil {
			fmt.Fprintf(w, "  %-45s %s against %s\n", textsafe.Printable(s.Knob+" = "+s.Value), ratioText(t.Result), t.Against)
		}
	}
	if len(res.Final) == 0 {
		fmt.Fprintln(w, "  nothing")
	}
	fmt.Fprintln(w, "rejected:")
	for _, t := range res.Trials {
		if t.Decision == autotune.Dropped {
			fmt.Fprintf(w, "  %-45s %s: %s\n", textsafe.Printable(t.Setting.Knob+" = "+t.Setting.Value), ratioText(t.Result), t.Reason)
		}
	}
	if len(res.Untested) > 0 || len(untested) > 0 {
		fmt.Fprintln(w, "untested:")
		for _, u := range res.Untested {
			fmt.Fprintf(w, "  %s = %s: %s\n", u.Setting.Knob, u.Setting.Value, u.Reason)
		}
		for _, u := range untested {
			fmt.Fprintf(w, "  %s\n", u)
		}
	}
	switch c := res.Confirmation; {
	case res.Stopped != "":
		fmt.Fprintf(w, "stopped: %s: nothing is confirmed (the host is rolled back)\n", res.Stopped)
	case c == nil:
		fmt.Fprintln(w, "confirmation: nothing kept, nothing to confirm")
	case c.Confirmed:
		fmt.Fprintf(w, "confirmed: %s against the baseline on %d fresh rounds (%.0f%% interval)\n", ratioText(c.Result), c.Result.N, 100*(1-c.Result.Level))
	default:
		fmt.Fprintf(w, "not confirmed: %s against the baseline on %d fresh rounds: no plan is offered\n", ratioText(c.Result), c.Result.N)
	}
	fmt.Fprintf(w, "%d measurements. report: %s/report.md", res.Measurements, o.dir)
	if planPath != "" {
		fmt.Fprintf(w, "; plan: %s (redline tune apply %s --yes)", planPath, planPath)
	}
	fmt.Fprintln(w)
}

// autotuneReport is the session as Markdown: the procedure's figures,
// the trajectory (every comparison against its incumbent), the
// confirmation and what was not tried.
func autotuneReport(o *autotuneOptions, res *autotune.Result, untested []string) string {
	var b strings.Builder
	p, n := res.Plan, res.Noise
	fmt.Fprintf(&b, "# redline autotune\n\nObjective: %s of %s on a managed redis-server", mdCell(objectiveText(o)), mdCode(o.target.Workload))
	if len(o.target.ServerConfig) > 0 {
		var lines []string
		for _, l := range o.target.ServerConfig {
			lines = append(lines, mdCode(l))
		}
		fmt.Fprintf(&b, " started with %s", strings.Join(lines, ", "))
	}
	fmt.Fprintf(&b, ".\n\nSeed %d. Every keep decision at %.4f%% two-sided: alpha %.0f%% over the session, split over %d comparisons and %d looks (rounds %v). Confirmation at %.0f%% on %d fresh rounds.\n\n",
		o.engine.Seed, 100*p.Design.Level(), 100*p.Design.Alpha, p.Design.Comparisons, p.Design.Looks, p.Looks, 100*p.Confirm.Level(), p.ConfirmRounds)
	fmt.Fprintf(&b, "## Noise\n\n%d rounds of the baseline against itself: median %.6g, paired spread %.2f%%, A/A %s (%s); smallest gain detectable with 95%% power by the last look: %.2f%%.\n\n",
		n.Rounds, n.Baseline, 100*n.Sigma, ratioText(n.AA), stats.LabWords.Verdict(n.AA.Outcome), 100*n.Detectable)
	if len(o.target.Doctor) > 0 {
		b.WriteString("## Doctor\n\n")
		for _, l := range o.target.Doctor {
			fmt.Fprintf(&b, "- %s\n", mdCell(l))
		}
		b.WriteString("\n")
	}
	b.WriteString(autotuneBuildsMarkdown(o.target.Builds))
	b.WriteString("## Trajectory\n\n| # | phase | setting | against | rounds | ratio | interval | decision | why |\n|--:|---|---|---|--:|--:|---|---|---|\n")
	for _, t := range res.Trials {
		iv := ""
		if t.Result.HasCI {
			iv = fmt.Sprintf("[%.3f, %.3f]", t.Result.CILow, t.Result.CIHigh)
		}
		fmt.Fprintf(&b, "| %d | %s | %s = %s | %s | %d | x%.3f | %s | %s | %s |\n", t.N, t.Phase, mdCell(t.Setting.Knob), mdCell(t.Setting.Value), mdCell(t.Against.String()), t.Rounds, t.Result.Ratio, iv, t.Decision, mdCell(t.Reason))
	}
	b.WriteString("\n## Result\n\n")
	switch c := res.Confirmation; {
	case res.Stopped != "":
		fmt.Fprintf(&b, "Stopped: %s. This report is partial; nothing is confirmed.\n", mdCell(res.Stopped))
	case c == nil:
		b.WriteString("Nothing kept; nothing to confirm.\n")
	case c.Confirmed:
		fmt.Fprintf(&b, "Confirmed: %s %s against the baseline on %d fresh rounds.\n", mdCode(c.Config.String()), ratioText(c.Result), c.Result.N)
	default:
		fmt.Fprintf(&b, "Not confirmed: %s %s against the baseline on %d fresh rounds. No plan is offered.\n", mdCode(c.Config.String()), ratioText(c.Result), c.Result.N)
	}
	if len(res.Untested) > 0 || len(untested) > 0 {
		b.WriteString("\n## Not tried\n\n")
		for _, u := range res.Untested {
			fmt.Fprintf(&b, "- %s = %s: %s\n", mdCell(u.Setting.Knob), mdCell(u.Setting.Value), mdCell(u.Reason))
		}
		for _, u := range untested {
			fmt.Fprintf(&b, "- %s\n", mdCell(u))
		}
	}
	fmt.Fprintf(&b, "\n%d measurements.\n", res.Measurements)
	return b.String()
}

// mdCell and mdCode are the one escaping of Markdown text and of code
// spans (textsafe): a knob's value, a reason, a workload line shows as
// text on one table line, its controls escaped.
var mdCell, mdCode = textsafe.MarkdownText, textsafe.MarkdownCode
