package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"redline/internal/textsafe"
	"strconv"
	"strings"

	"redline/internal/benchdata"
)

// Capacity searches (bench --slo) are drawn as throughput-latency curves:
// offered rate across, the first target's percentile up on a log axis,
// the target as a dashed line, each search's capacity (the knee) as a
// vertical line with its interval shaded, one colour per label.

// labelledCapacity is one search with the label of its group.
type labelledCapacity struct {
	Label string
	C     *benchdata.Capacity
}

// capacities returns the row's capacity searches, by group.
func capacities(w *Workload) []labelledCapacity {
	var out []labelledCapacity
	for _, g := range w.Groups {
		for _, s := range g.samples {
			if s.summary != nil && s.summary.Capacity != nil {
				out = append(out, labelledCapacity{Label: g.Label, C: s.summary.Capacity})
			}
		}
	}
	return out
}

// curveTarget is what the chart plots: the first target of the first
// search.
func curveTarget(cs []labelledCapacity) benchdata.SLOTarget {
	for _, c := range cs {
		if len(c.C.Targets) > 0 {
			return c.C.Targets[0]
		}
	}
	return benchdata.SLOTarget{Name: "p99", Percentile: 99}
}

// curveChart draws the row's capacity curves overlaid; "" when it has none.
func curveChart(r *Report, w *Workload) string {
	cs := capacities(w)
	if len(cs) == 0 {
		return ""
	}
	t := curveTarget(cs)
	maxX, maxCap, lo, hi := 0.0, 0.0, math.Inf(1), 0.0
	if t.TargetMS > 0 {
		lo, hi = t.TargetMS, t.TargetMS
	}
	for _, c := range cs {
		maxCap = math.Max(maxCap, c.C.High)
		for _, st := range c.C.Curve {
			maxX = math.Max(maxX, st.OfferedRPS)
		}
	}
	if maxCap > 0 {
		maxX = math.Min(maxX, 2*maxCap) // far beyond the knee says nothing more
	}
	for _, c := range cs {
		for _, st := range c.C.Curve {
			if v := c.C.Percentile(st, t.Name); v > 0 && !math.IsInf(v, 0) && st.OfferedRPS <= maxX {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if maxX <= 0 || hi <= 0 {
		return ""
	}
	ylo, yhi := math.Log10(step125(lo, false)), math.Log10(step125(hi, true))
	if yhi-ylo < 1 {
		yhi = ylo + 1
	}
	stepX := niceStep(maxX, 6)
	maxX = math.Ceil(maxX/stepX) * stepX
	left, right, top, bottom, h := 64.0, 24.0, 12.0, 44.0, 340.0
	x := func(v float64) float64 { return left + (chartWidth-left-right)*v/maxX }
	y := func(ms float64) float64 {
		return h - bottom - (h-top-bottom)*(math.Log10(math.Min(math.Max(ms, math.Pow(10, ylo)), math.Pow(10, yhi)))-ylo)/(yhi-ylo)
	}
	var c canvas
	c.open(chartWidth, h, fmt.Sprintf("Throughput-latency curves for %s: %s (ms, log scale) by offered rate, target %s ms", w.Name, t.Name, fmtMs(t.TargetMS)))
	curveAxes(&c, maxX, stepX, ylo, yhi, x, y, h-bottom, top, t.Name)
	for _, lc := range cs {
		color := colorOf(r, lc.Label)
		if lc.C.Found {
			c.add(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s" fill-opacity="0.12"/>`, num(x(math.Min(lc.C.Low, maxX))), num(top),
				num(math.Max(x(math.Min(lc.C.High, maxX))-x(math.Min(lc.C.Low, maxX)), 1)), num(h-bottom-top), color)
			c.add(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-dasharray="2 3" stroke-width="1.5"/>`, num(x(lc.C.RPS)), num(top), num(x(lc.C.RPS)), num(h-bottom), color)
		}
		curveLine(&c, lc.C, t.Name, maxX, x, y, color)
	}
	if t.TargetMS > 0 {
		c.line(x(0), y(t.TargetMS), x(maxX), y(t.TargetMS), "zero")
		c.text(x(maxX)-4, y(t.TargetMS)-5, "end", "axis", "target "+t.Name+" "+trimZeros(t.TargetMS)+" ms")
	}
	curveLegend(&c, r, cs, left+8, top+6)
	return c.String()
}

func curveAxes(c *canvas, maxX, stepX, ylo, yhi float64, x, y func(float64) float64, base, top float64, name string) {
	for v := 0.0; v <= maxX+stepX/2; v += stepX {
		c.line(x(v), top, x(v), base, "grid")
		c.text(x(v), base+16, "middle", "tick", shortNum(v))
	}
	c.text(x(maxX/2), base+36, "middle", "axis", "offered rate (requests/s, open loop)")
	for d := math.Floor(ylo); d <= yhi; d++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, d)
			if lv := math.Log10(v); lv < ylo-1e-9 || lv > yhi+1e-9 {
				continue
			}
			c.line(x(0), y(v), x(maxX), y(v), map[bool]string{true: "grid", false: "grid minor"}[m == 1])
			c.text(x(0)-6, y(v)+4, "end", "tick", shortNum(v))
		}
	}
	c.add(`<text x="14" y="%s" text-anchor="middle" class="axis" transform="rotate(-90 14 %s)">%s (ms)</text>`, num((base+top)/2), num((base+top)/2), esc(name))
}

// curveLine joins a search's steps by rate and marks each: filled where
// the targets held, hollow where they failed.
func curveLine(c *canvas, capy *benchdata.Capacity, name string, maxX float64, x, y func(float64) float64, color string) {
	var pts []string
	for _, st := range capy.ByRate() {
		v := capy.Percentile(st, name)
		if st.OfferedRPS > maxX || v <= 0 {
			continue
		}
		px, py := num(x(st.OfferedRPS)), num(y(v))
		pts = append(pts, px+","+py)
		fill := color
		if !st.Holds {
			fill = "#fff"
		}
		c.add(`<circle cx="%s" cy="%s" r="3" fill="%s" stroke="%s"><title>%s</title></circle>`, px, py, fill, color,
			esc(fmt.Sprintf("%.0f/s offered, %.0f/s achieved, %s %s ms, %s", st.OfferedRPS, st.AchievedRPS, name, fmtMs(v), holdsWord(st))))
	}
	c.add(`<polyline points="%s" fill="none" stroke="%s" class="curve" stroke-opacity="0.6"/>`, strings.Join(pts, " "), color)
}

func holdsWord(st benchdata.CurveStep) string {
	if st.Holds {
		return "holds"
	}
	return "fails: " + st.Why
}

func curveLegend(c *canvas, r *Report, cs []labelledCapacity, x, y float64) {
	var labels []string
	seen := map[string]bool{}
	for _, lc := range cs {
		if !seen[lc.Label] {
			seen[lc.Label] = true
			labels = append(labels, lc.Label)
		}
	}
	c.add(`<rect x="%s" y="%s" width="%s" height="%s" class="legendbox"/>`, num(x), num(y), num(labelWidth(labels)+34), num(16*float64(len(labels))+6))
	for i, l := range labels {
		legend(c, x+6, y+16+16*float64(i), colorOf(r, l), l)
	}
}

// capacityLine is a search's answer in words.
func capacityLine(c *benchdata.Capacity) string {
	if !c.Found {
		return "none found"
	}
	return fmt.Sprintf("%s/s [%s, %s]", fmtRPS(c.RPS), fmtRPS(c.Low), fmtRPS(c.High))
}

func targetsText(ts []benchdata.SLOTarget) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.Name + " <= " + trimZeros(t.TargetMS) + " ms"
	}
	return strings.Join(parts, ", ")
}

// capacityRows are the row's searches, one line each, with each
// capacity's ratio to the reference label's first search.
func capacityRows(r *Report, w *Workload) [][]string {
	cs := capacities(w)
	var ref *benchdata.Capacity
	for _, lc := range cs {
		if lc.Label == r.Reference && lc.C.Found && ref == nil {
			ref = lc.C
		}
	}
	rows := make([][]string, 0, len(cs))
	for _, lc := range cs {
		vs := ""
		if ref != nil && lc.C.Found && lc.C != ref {
			vs = fmt.Sprintf("×%.2f [%.2f, %.2f]", lc.C.RPS/ref.RPS, lc.C.Low/ref.High, lc.C.High/ref.Low)
		}
		rows = append(rows, []string{lc.Label, targetsText(lc.C.Targets), capacityLine(lc.C), strconv.Itoa(lc.C.Steps),
			fmt.Sprintf("%.0f s", lc.C.Seconds), vs})
	}
	return rows
}

var capacityHeader = []string{"label", "target", "capacity [95% interval]", "steps", "time", "vs reference (interval bounds)"}

// curveRows are a search's steps by rate, compactly.
func curveRows(c *benchdata.Capacity) [][]string {
	var rows [][]string
	for _, st := range c.ByRate() {
		rows = append(rows, []string{fmtRPS(st.OfferedRPS), fmtRPS(st.AchievedRPS), fmtMs(st.Latency.P50), fmtMs(st.Latency.P99),
			fmtMs(st.Latency.P999), strconv.FormatInt(st.Errors, 10), holdsWord(st)})
	}
	return rows
}

var curveHeader = []string{"offered/s", "achieved/s", "p50", "p99", "p99.9", "errors", "target"}

// writeCapacityMD prints each row's searches and their curves.
func writeCapacityMD(mw *textsafe.Writer, r *Report) {
	first := true
	for _, w := range r.Workloads {
		cs := capacities(w)
		if len(cs) == 0 {
			continue
		}
		if first {
			mw.Printf("\n## Capacity at the latency target\n\nEach search offered the workload open loop (latency from intended send times) at the rates below; the capacity is the rate at which a step holds the targets half the time, with its 95%% credible interval.\n")
			first = false
		}
		mw.Printf("\n### %s\n\n", md(w.Name))
		table(mw, "llrrrl", capacityHeader, mdRows(capacityRows(r, w)))
		for _, lc := range cs {
			mw.Printf("\n**%s**: %s at %s\n", md(lc.Label), capacityLine(lc.C), targetsText(lc.C.Targets))
			table(mw, "rrrrrrl", curveHeader, mdRows(curveRows(lc.C)))
		}
	}
}

// WriteCurves writes every capacity search's steps as CSV, one row each
// (format "curves").
func WriteCurves(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"workload", "label", "target", "capacity_rps", "capacity_low", "capacity_high", "seq", "offered_rps", "achieved_rps",
		"p50_ms", "p99_ms", "p99_9_ms", "target_ms", "errors", "backlog", "holds", "why"})
	for _, wl := range r.Workloads {
		for _, lc := range capacities(wl) {
			t := curveTarget([]labelledCapacity{lc})
			for _, st := range lc.C.ByRate() {
				cw.Write([]string{csvCell(wl.Name), csvCell(lc.Label), targetsText(lc.C.Targets), fixed(lc.C.RPS, 0), fixed(lc.C.Low, 0), fixed(lc.C.High, 0),
					strconv.Itoa(st.Seq), fixed(st.OfferedRPS, 2), fixed(st.AchievedRPS, 2), fixed(st.Latency.P50, 3), fixed(st.Latency.P99, 3),
					fixed(st.Latency.P999, 3), fixed(lc.C.Percentile(st, t.Name), 3), strconv.FormatInt(st.Errors, 10), strconv.FormatInt(st.Backlog, 10),
					strconv.FormatBool(st.Holds), csvCell(st.Why)})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
