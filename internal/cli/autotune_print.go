package cli

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"redline/internal/atomicfile"
	"redline/internal/autotune"
	"redline/internal/report"
	"redline/internal/stats"
	"redline/internal/target"
	"redline/internal/textsafe"
)

// objectiveText says what the session measures and what its ratios mean.
func objectiveText(o *autotuneOptions) string {
	switch {
	case o.target.Objective == "p99":
		return "p99 latency (ratios are gains: x1.10 is a p99 1.10 times lower)"
	case o.target.P99Max > 0:
		return fmt.Sprintf("throughput subject to p99 ≤ %s (ratios are of requests/s; a setting is kept only when its median p99 is shown within the bound)", o.target.P99Max)
	}
	return "throughput (ratios are of requests/s)"
}

// autotunePrintReady says what the session is about to do: the plan,
// the builds' time, the target, the guard's decision, the doctor's lines.
func autotunePrintReady(w io.Writer, o *autotuneOptions, r target.Ready) {
	autotunePrintPlan(w, o, r.Plan, r.Per, r.MaxMeasurements)
	if r.Builds > 0 { // not part of --budget: the builds are done before the first measurement
		fmt.Fprintf(w, "builds: %d took %s before the first measurement, outside the budget (cached: %s)\n",
			r.Builds, r.BuildTime.Round(100*time.Millisecond), cmp.Or(strings.Join(r.Cached, ", "), "none"))
	}
	fmt.Fprintf(w, "target: %s; after a crash: %s\n", r.Where, o.rollbackHint())
	fmt.Fprintf(w, "host-wide: %s\n", r.Guard)
	for _, l := range r.Doctor {
		fmt.Fprintf(w, "doctor: %s\n", textsafe.Printable(l)) // a resumed journal's lines too
	}
}

func autotunePrintPlan(w io.Writer, o *autotuneOptions, p autotune.Plan, per time.Duration, max int) {
	fmt.Fprintf(w, "autotune: %s of `%s`\n", objectiveText(o), o.target.Workload)
	fmt.Fprintf(w, "plan: %d candidate values, at most %d comparisons; %s\n", p.Screening, p.Comparisons, levelsText(p))
	worst := time.Duration(p.MaxMeasurements) * per
	fmt.Fprintf(w, "estimate: at most %d measurements of about %s (%s); budget %s (%d measurements)\n",
		p.MaxMeasurements, per.Round(100*time.Millisecond), worst.Round(time.Second), o.budget, max)
}

// levelsText states the keep decisions' levels: "keep decisions at
// 0.0250% two-sided (first looks) and 0.2000% (the last): alpha 5% over
// the session, Bonferroni over 11 comparisons x 7 looks at rounds [...],
// half of each comparison's share at its last look".
func levelsText(p autotune.Plan) string {
	if len(p.LookDesigns) == 0 {
		return "no plan recorded"
	}
	first, last := p.LookDesigns[0].Level(), p.LookDesigns[len(p.LookDesigns)-1].Level()
	lv := fmt.Sprintf("each keep decision at %.4f%% two-sided", 100*first)
	if len(p.LookDesigns) > 1 {
		lv = fmt.Sprintf("keep decisions at %.4f%% two-sided (each look before the last) and %.4f%% (the last)", 100*first, 100*last)
	}
	return fmt.Sprintf("%s: alpha %.0f%% over the session, Bonferroni over %d comparisons x %d looks at rounds %v", lv, 100*p.Design.Alpha, p.Design.Comparisons, p.Design.Looks, p.Looks)
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
		if t := target.KeptTrial(res, s); t != nil {
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
			fmt.Fprintf(w, "  %s\n", textsafe.Printable(u))
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
	fmt.Fprintf(w, "%d measurements. report: %s/report.md, %s/report.html", res.Measurements, o.dir, o.dir)
	if planPath != "" {
		fmt.Fprintf(w, "; plan: %s (redline tune apply %s --yes)", planPath, planPath)
	}
	fmt.Fprintln(w)
}

// autotuneReport is the session as its report shows it (report renders
// it as Markdown and HTML): the procedure's figures, the noise, what was
// kept, rejected and not tried, the trajectory (every comparison against
// its incumbent at each look), the confirmation and the server-time
// breakdown of the baseline against the final plan.
func autotuneReport(o *autotuneOptions, res *autotune.Result, untested []string) *report.Autotune {
	p, n := res.Plan, res.Noise
	a := &report.Autotune{Objective: objectiveText(o), Workload: o.target.Workload, Target: "a managed redis-server",
		Goal: min(n.Detectable, cmp.Or(o.engine.MinGain, autotune.DefaultMinGain)), Measurements: res.Measurements}
	if len(o.target.ServerConfig) > 0 {
		a.Target += " started with " + strings.Join(o.target.ServerConfig, "; ")
	}
	lv := levelsText(p)
	a.Procedure = fmt.Sprintf("Seed %d. %s%s. Confirmation at %.0f%% on fresh rounds (at least %d).",
		o.engine.Seed, strings.ToUpper(lv[:1]), lv[1:], 100*p.Confirm.Level(), p.ConfirmRounds)
	if n.Rounds > 0 {
		a.Noise = report.AutotuneNoise{Rounds: n.Rounds, Sigma: n.Sigma, Detectable: n.Detectable,
			AA: ratioText(n.AA) + " (" + stats.LabWords.Verdict(n.AA.Outcome) + ")"}
		if n.BaselineP99 > 0 {
			a.Noise.AA += fmt.Sprintf("; the baseline's median p99 %.3f ms", n.BaselineP99)
		}
	}
	a.Doctor = o.target.Doctor
	a.Builds = autotuneBuildLines(o.target.Builds)
	for _, t := range res.Trials {
		a.Trials = append(a.Trials, autotuneReportTrial(res, t))
	}
	for _, u := range res.Untested {
		a.Untested = append(a.Untested, u.Setting.Knob+" = "+u.Setting.Value+": "+u.Reason)
	}
	a.Untested = append(a.Untested, untested...)
	a.Result, a.Confirmed = confirmationText(res), res.Confirmation != nil && res.Confirmation.Confirmed
	if c := res.Confirmation; c != nil {
		a.Baseline, a.Plan = c.Baseline, c.Plan
		a.BaselineCommands, a.PlanCommands = reportCommands(c.BaselineCommands), reportCommands(c.PlanCommands)
	}
	a.BreakdownNote = "the server host's counters could not be read"
	if res.Confirmation == nil {
		a.BreakdownNote = "there was no confirmation (nothing kept, or the session stopped)"
	}
	return a
}

func autotuneReportTrial(res *autotune.Result, t autotune.Trial) report.AutotuneTrial {
	rt := report.AutotuneTrial{N: t.N, Phase: string(t.Phase), Setting: t.Setting.Knob + " = " + t.Setting.Value, Against: t.Against.String(),
		Reason: t.Reason, Decision: string(t.Decision), Rounds: t.Rounds}
	if v, ok := res.Final.Value(t.Setting.Knob); ok && v == t.Setting.Value && t.Decision == autotune.Kept {
		rt.InFinal = target.KeptTrial(res, t.Setting).N == t.N
	}
	for _, l := range t.Looks {
		rt.Looks = append(rt.Looks, report.AutotuneLook{Rounds: l.Rounds, Ratio: l.Ratio, CILow: l.CILow, CIHigh: l.CIHigh, HasCI: l.HasCI})
	}
	if len(rt.Looks) == 0 { // a journal of an older session: the deciding look only
		rt.Looks = []report.AutotuneLook{{Rounds: t.Rounds, Ratio: t.Result.Ratio, CILow: t.Result.CILow, CIHigh: t.Result.CIHigh, HasCI: t.Result.HasCI}}
	}
	if b := t.P99; b != nil {
		rt.P99 = p99BoundText(b)
	}
	return rt
}

// p99BoundText is "median 1.20 ms, at most 1.45 ms (bound 2 ms): within".
func p99BoundText(b *autotune.P99Bound) string {
	s := fmt.Sprintf("median %.3f ms", b.Median)
	if b.HasCI {
		s += fmt.Sprintf(", at most %.3f ms", b.High)
	}
	if b.Within {
		return s + fmt.Sprintf(" (bound %.3g ms): within", b.Max)
	}
	return s + fmt.Sprintf(" (bound %.3g ms): not shown within", b.Max)
}

// confirmationText is the session's answer in one sentence.
func confirmationText(res *autotune.Result) string {
	c := res.Confirmation
	switch {
	case res.Stopped != "":
		return "Stopped: " + res.Stopped + ". This report is partial; nothing is confirmed."
	case c == nil:
		return "Nothing kept; nothing to confirm."
	case c.Confirmed:
		return fmt.Sprintf("Confirmed: %s %s against the baseline on %d fresh rounds.%s", c.Config, ratioText(c.Result), c.Result.N, confirmP99(c))
	}
	return fmt.Sprintf("Not confirmed: %s %s against the baseline on %d fresh rounds: %s. No plan is offered.%s", c.Config, ratioText(c.Result), c.Result.N, c.Reason, confirmP99(c))
}

func confirmP99(c *autotune.Confirmation) string {
	if c.P99 == nil {
		return ""
	}
	return " p99 of the plan: " + p99BoundText(c.P99) + "."
}

// writeAutotuneReports writes report.md and report.html in dir.
func writeAutotuneReports(dir string, a *report.Autotune) error {
	var md, page bytes.Buffer
	if err := report.WriteAutotuneMarkdown(&md, a); err != nil {
		return err
	}
	if err := report.WriteAutotuneHTML(&page, a); err != nil {
		return err
	}
	return errors.Join(atomicfile.Write(filepath.Join(dir, "report.md"), md.Bytes(), 0o644),
		atomicfile.Write(filepath.Join(dir, "report.html"), page.Bytes(), 0o644))
}

func reportCommands(cs []autotune.CommandTime) []report.AutotuneCommand {
	out := make([]report.AutotuneCommand, len(cs))
	for i, c := range cs {
		out[i] = report.AutotuneCommand{Command: c.Command, Calls: c.Calls, Usec: c.Usec}
	}
	return out
}
