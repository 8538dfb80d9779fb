package labdata

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"redline/internal/stats"
)

// LooksText is the run counts a sequential lab examines its runs at, as a
// person reads them: "11 and 16", "8, 11 and 16".
func (q *Sequential) LooksText() string {
	s := make([]string, len(q.Looks))
	for i, n := range q.Looks {
		s[i] = strconv.Itoa(n)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// NothingClear is the lab's answer when none of its throughput and p99
// comparisons makes a claim because their intervals stayed wider than the
// precision: one sentence with the cause (how much the runs themselves
// varied, and what about the runs makes them vary) and next steps that
// redline lab accepts. It also tells the noise flags apart from that
// variation: a run is flagged when other work took the machine, which is
// not why runs of a quiet machine differ. "" when some comparison claims
// a change, or none is wide. The terminal and the report both print it.
func (r *Result) NothingClear() string {
	q := r.Sequential
	if q == nil || q.Precision <= 0 {
		return ""
	}
	var widths []float64
	paired := false
	for _, c := range r.Comparisons {
		if c.Metric != MetricRPS.Key && c.Metric != MetricP99.Key {
			continue
		}
		if stats.Claims(c.Verdict) {
			return ""
		}
		if c.HasCI && c.CIHigh-c.CILow >= q.Precision {
			widths = append(widths, c.CIHigh-c.CILow)
			paired = paired || c.Paired
		}
	}
	if len(widths) == 0 {
		return ""
	}
	within := "from one run to the next"
	if paired {
		within = "within a round, from one variant's run to the next"
	}
	s := fmt.Sprintf("Nothing is clear: the intervals are %s wide against the %.0f%% precision because the runs themselves vary that much %s%s",
		pctRange(widths), 100*q.Precision, within, r.runsCause())
	flagged, judged := r.noisyRuns()
	if judged > 0 {
		s += fmt.Sprintf("; %d of %d runs were flagged as noisy, a flag for other work taking the machine, which is not this variation", flagged, judged)
	}
	return s + "; next: longer runs (a scenario file whose workloads' bench lines have --duration 10s: redline lab FILE) or more rounds (redline lab --budget 10m), or a machine with more CPUs."
}

// runsCause is what about the runs makes them vary: their length, and a
// client and server sharing a small machine's CPUs.
func (r *Result) runsCause() string {
	var secs []float64
	for _, run := range r.Runs {
		if run.Summary != nil && run.Summary.ElapsedSeconds > 0 {
			secs = append(secs, run.Summary.ElapsedSeconds)
		}
	}
	var parts []string
	if len(secs) > 0 {
		slices.Sort(secs)
		parts = append(parts, fmt.Sprintf("%.0f-second runs", secs[len(secs)/2]))
	}
	if r.ServerHost == nil && r.Host.CPUs > 0 && r.Host.CPUs <= 4 {
		parts = append(parts, fmt.Sprintf("client and server sharing %d CPUs", r.Host.CPUs))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func (r *Result) noisyRuns() (flagged, judged int) {
	for _, run := range r.Runs {
		if run.Noise == nil {
			continue
		}
		judged++
		if run.Noise.Noisy != "" {
			flagged++
		}
	}
	return flagged, judged
}

// pctRange is "10-20%" (or "12%") for fractions.
func pctRange(xs []float64) string {
	lo, hi := slices.Min(xs), slices.Max(xs)
	if fmt.Sprintf("%.0f", 100*lo) == fmt.Sprintf("%.0f", 100*hi) {
		return fmt.Sprintf("%.0f%%", 100*hi)
	}
	return fmt.Sprintf("%.0f-%.0f%%", 100*lo, 100*hi)
}
