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
		notes = append(notes, fmt.Sprintf("%d runs were shorter than %d seconds: too short to tell warm-up or drift within a run (give the workload's bench line a longer --duration in a scenario file).", short, minSeconds))
	}
	return notes
}

// seriesChart draws each run's throughput second by second, one thin line
// per run in its variant's colour: a warm-up shows as a low first point, a
// drift as a slope, a two-humped group as two bands. "" when no run of the
// workload lasted two seconds.
func seriesChart(r *Report, w *Workload) string {
	longest, ymax := 0, 0.0
	for _, g := range w.Groups {
		for _, s := range g.samples {
			longest = max(longest, len(s.Series))
			for _, x := range s.Series {
				ymax = max(ymax, x.RPS)
			}
		}
	}
	if longest < 2 || ymax <= 0 {
		return ""
	}
	left, right, top, bottom, h := 56.0, 120.0, 24.0, 40.0, 200.0
	plotW, plotH := chartWidth-left-right, h-top-bottom
	step := niceStep(ymax, 4)
	ymax = max(step, float64(int(ymax/step)+1)*step)
	x := func(i int) float64 { return left + plotW*float64(i)/float64(longest-1) }
	y := func(v float64) float64 { return top + plotH*(1-v/ymax) }
	var c canvas
	c.open(chartWidth, h, "Throughput of "+w.Name+" second by second, one line per run")
	c.text(6, 15, "start", "label title", w.Name+": throughput second by second")
	for t := 0.0; t <= ymax+step/2; t += step {
		c.line(left, y(t), left+plotW, y(t), "grid")
		c.text(left-6, y(t)+4, "end", "tick", shortNum(t))
	}
	for i := range longest {
		c.text(x(i), h-bottom+16, "middle", "tick", itoa(i+1))
	}
	c.text(left+plotW/2, h-6, "middle", "axis", "second of the measured run (requests/s)")
	for li, g := range w.Groups {
		color := colorOf(r, g.Label)
		for _, s := range g.samples {
			if len(s.Series) < 2 || s.Problem != "" {
				continue
			}
			pts := make([]string, len(s.Series))
			for i, p := range s.Series {
				pts[i] = num(x(i)) + "," + num(y(p.RPS))
			}
			c.add(`<polyline points="%s" fill="none" stroke="%s" stroke-width="1" opacity="0.6"/>`, joinSpace(pts), color)
		}
		c.add(`<text x="%s" y="%s" class="label" style="fill:%s">%s</text>`, num(chartWidth-right+10), num(top+14+16*float64(li)), color, esc(g.Label))
	}
	return c.String()
}
