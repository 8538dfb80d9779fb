package bench

import (
	"fmt"
	"io"
	"strings"

	"redline/internal/benchdata"
)

// SLOText names the targets: "p99 <= 1ms, p99.9 <= 5ms".
func SLOText(ts []benchdata.SLOTarget) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s <= %sms", t.Name, fmtMS(t.TargetMS))
	}
	return strings.Join(parts, ", ")
}

// CapacityLine is the answer in one line, in the user's words: "at p99
// <= 1ms the server serves 71234 requests per second [69012, 73201] (95%
// interval)".
func CapacityLine(c *benchdata.Capacity) string {
	if !c.Found {
		return fmt.Sprintf("at %s: no capacity found; %s", SLOText(c.Targets), c.Note)
	}
	return fmt.Sprintf("at %s the server serves %.0f requests per second [%.0f, %.0f] (%g%% interval)",
		SLOText(c.Targets), c.RPS, c.Low, c.High, 100*c.Level)
}

// WriteCapacity prints a capacity search redis-benchmark-style: the
// title, the answer and how it was reached, then the curve by offered
// rate.
func WriteCapacity(w io.Writer, s *benchdata.Summary) {
	c := s.Capacity
	fmt.Fprintf(w, "====== %s: capacity at %s ======\n", s.Title, SLOText(c.Targets))
	fmt.Fprintf(w, "  %s\n", CapacityLine(c))
	budget := fmt.Sprintf("%.1f s of a %g s budget", c.Seconds, c.BudgetSeconds)
	if c.Exhausted {
		budget += ", which ended it"
	}
	fmt.Fprintf(w, "  %d steps of %g s, open loop (latency from intended send times), %s\n", c.Steps, c.StepSeconds, budget)
	fmt.Fprintf(w, "  %d parallel clients, pipeline %d, holds when achieved >= %g%% of offered and errors <= %g%%\n",
		s.Config.Clients, s.Config.Pipeline, 100*c.KeepUp, 100*c.MaxErrors)
	if c.ProbeRPS > 0 {
		fmt.Fprintf(w, "  closed-loop probe (same clients): %.0f requests per second\n", c.ProbeRPS)
	}
	if c.Note != "" && c.Found {
		fmt.Fprintf(w, "  note: %s\n", c.Note)
	}
	fmt.Fprintln(w)
	WriteCurve(w, c)
	fmt.Fprintln(w)
}

// curveColumns are the latency columns of the curve, then each target
// percentile that is not one of them.
func curveColumns(c *benchdata.Capacity) []string {
	cols := []string{"p50", "p99", "p99.9"}
	for _, t := range c.Targets {
		if !contains(cols, t.Name) {
			cols = append(cols, t.Name)
		}
	}
	return cols
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// WriteCurve prints the curve as a table by offered rate.
func WriteCurve(w io.Writer, c *benchdata.Capacity) {
	cols := curveColumns(c)
	fmt.Fprintf(w, "  %10s %11s", "offered/s", "achieved/s")
	for _, col := range cols {
		fmt.Fprintf(w, " %9s", col+" ms")
	}
	fmt.Fprintf(w, " %8s  %s\n", "errors", "target")
	for _, cs := range c.ByRate() {
		fmt.Fprintf(w, "  %10.0f %11.0f", cs.OfferedRPS, cs.AchievedRPS)
		for _, col := range cols {
			fmt.Fprintf(w, " %9.3f", c.Percentile(cs, col))
		}
		verdict := "holds"
		if !cs.Holds {
			verdict = "fails: " + cs.Why
		}
		fmt.Fprintf(w, " %8d  %s\n", cs.Errors, verdict)
	}
}

// CurveCSVHeader heads WriteCurveCSV's rows.
const CurveCSVHeader = `"test","offered_rps","achieved_rps","p50_ms","p99_ms","p99_9_ms","errors","holds","capacity_rps","capacity_low","capacity_high"` + "\n"

// WriteCurveCSV prints the curve as CSV rows (--csv), each with the
// answer, so one file holds every test's.
func WriteCurveCSV(w io.Writer, s *benchdata.Summary) {
	c := s.Capacity
	for _, cs := range c.ByRate() {
		fmt.Fprintf(w, "%q,\"%.2f\",\"%.2f\",\"%.3f\",\"%.3f\",\"%.3f\",\"%d\",\"%t\",\"%.0f\",\"%.0f\",\"%.0f\"\n",
			s.Title, cs.OfferedRPS, cs.AchievedRPS, cs.Latency.P50, cs.Latency.P99, cs.Latency.P999, cs.Errors, cs.Holds, c.RPS, c.Low, c.High)
	}
}
