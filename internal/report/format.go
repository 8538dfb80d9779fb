package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"redline/internal/secret"
	"redline/internal/shellwords"
	"redline/internal/stats"
)

// fmtRPS prints requests per second as a whole number with thousands
// separators: 105,219.
func fmtRPS(v float64) string {
	s := strconv.FormatInt(int64(math.Round(v)), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// fmtMs prints milliseconds with three decimals (microsecond resolution,
// as redis-benchmark does).
func fmtMs(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// fmtRatio prints a ratio with three decimals.
func fmtRatio(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

// fmtCI prints a ratio's interval, "[0.970, 1.040]", or "" without one.
func fmtCI(v *Versus) string {
	if v == nil || !v.HasCI {
		return ""
	}
	return "[" + fmtRatio(v.CILow) + ", " + fmtRatio(v.CIHigh) + "]"
}

// fmtVersus prints "×1.152 (15.2% better) [1.090, 1.213]" (stats'
// convention: this ÷ reference, with the word), with † when mark is set
// and the report computed it.
func fmtVersus(v *Versus, mark bool) string {
	if v == nil {
		return "n/a"
	}
	s := stats.FormatRatio(v.Ratio, v.HigherIsBetter)
	if ci := fmtCI(v); ci != "" {
		s += " " + ci
	}
	if mark && v.ComputedBy == "report" {
		s += " †"
	}
	return s
}

// claims reports whether the verdict says there is a difference: only
// then does a report print the size of the change.
func claims(v *Versus) bool {
	return v != nil && stats.Claims(v.Verdict)
}

// fmtVerdict prints the verdict, with the change in words only when the
// verdict claims one: "helps (15.2% better)", "hurts (9.5% worse)", "no
// clear change".
func fmtVerdict(v *Versus) string {
	if v == nil {
		return ""
	}
	if claims(v) {
		return fmt.Sprintf("%s (%s)", v.Verdict, stats.Change(v.Ratio, v.HigherIsBetter))
	}
	if v.Reason != "" {
		return v.Verdict + ": " + v.Reason
	}
	return v.Verdict
}

// fmtCPU prints server CPU per request in microseconds, or "n/a".
func fmtCPU(v *float64) string {
	if v == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "n/a"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// shellJoin quotes argv so it can be pasted into a shell, without the
// passwords that files written before redaction may still hold.
func shellJoin(argv []string) string {
	return shellwords.Join(secret.Redact(argv))
}

// fmtBrief is a summary cell's verdict: the change when the verdict claims
// one, the bare ratio when there were too few runs for a verdict.
func fmtBrief(v *Versus) string {
	if v.Verdict == stats.VerdictTooFew {
		return "(" + stats.RatioNumber(v.Ratio) + ", " + stats.Change(v.Ratio, v.HigherIsBetter) + "; " + stats.VerdictTooFew + ")"
	}
	if !claims(v) {
		return v.Verdict // the reason is in the workload's table
	}
	return fmtVerdict(v)
}
