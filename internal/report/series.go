package report

import (
	"fmt"

	"redline/internal/labdata"
	"redline/internal/stats"
)

// Within a run: the per-second series tell a warm-up (the first second
// well below the rest) and a drift (the second half's median away from
// the first half's) that the run's single figure hides.
const (
	minSeconds   = 4    // shorter runs are not judged
	warmupFactor = 0.9  // first second below 90% of the rest's median
	driftFactor  = 0.10 // halves' medians more than 10% apart
)

// seriesShape says "warm-up", "drift", both or "" for one run's series.
func seriesShape(s []labdata.Second) (warmup, drift bool) {
	if len(s) < minSeconds {
		return false, false
	}
	rps := make([]float64, len(s))
	for i, x := range s {
		rps[i] = x.RPS
	}
	rest := stats.Median(rps[1:])
	warmup = rest > 0 && rps[0] < warmupFactor*rest
	body := rps[1:] // the warm-up second would pass for a drift
	h := len(body) / 2
	a, b := stats.Median(body[:h]), stats.Median(body[len(body)-h:])
	drift = a > 0 && (b/a-1 > driftFactor || 1-b/a > driftFactor)
	return warmup, drift
}

// seriesNotes count, per variant and workload, the runs that warmed up or
// drifted, and say when the runs are too short to tell.
func seriesNotes(res *labdata.Result) []string {
	var notes []string
	short := 0
	for _, k := range groupOrder(res) {
		warm, drift, judged := 0, 0, 0
		for _, r := range res.Runs {
			if r.Variant != k[0] || r.Workload != k[1] {
				continue
			}
			if len(r.Series) < minSeconds {
				if len(r.Series) > 0 {
					short++
				}
				continue
			}
			judged++
			w, d := seriesShape(r.Series)
			if w {
				warm++
			}
			if d {
				drift++
			}
		}
		if warm+drift > 0 {
			notes = append(notes, fmt.Sprintf("%s on %s: %d of %d runs were still warming up in their first second, %d drifted by more than %.0f%% between their halves (per-second series in result.json and runs.csv).",
				k[0], k[1], warm, judged, drift, 100*driftFactor))
		}
	}
	if short > 0 {
		notes = append(notes, fmt.Sprintf("%d runs were shorter than %d seconds: too short to tell warm-up or drift within a run (use --duration).", short, minSeconds))
	}
	return notes
}
