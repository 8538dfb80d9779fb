package report

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"redline/internal/labdata"
	"redline/internal/stats"
)

// Charts are hand-written SVG: small, exact, no fonts or scripts to embed,
// and they render the same offline in any browser.

// palette is Okabe and Ito's colour-blind-safe set; the reference is grey.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000"}

const refColor = "#6b6b6b"

// colorOf gives each label a stable colour across a report's charts.
func colorOf(r *Report, label string) string {
	if label == r.Reference {
		return refColor
	}
	i := 0
	for _, l := range r.Labels {
		if l == label {
			return palette[i%len(palette)]
		}
		if l != r.Reference {
			i++
		}
	}
	return palette[0]
}

// canvas writes one SVG element.
type canvas struct {
	b strings.Builder
}

func (c *canvas) add(format string, args ...any) { fmt.Fprintf(&c.b, format, args...) }

func (c *canvas) open(w, h float64, title string) {
	c.add(`<svg class="chart" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">`, num(w), num(h), num(w), num(h), esc(title))
	c.add(`<title>%s</title>`, esc(title))
}

func (c *canvas) text(x, y float64, anchor, class, s string) {
	c.add(`<text x="%s" y="%s" text-anchor="%s" class="%s">%s</text>`, num(x), num(y), anchor, class, esc(s))
}

func (c *canvas) line(x1, y1, x2, y2 float64, class string) {
	c.add(`<line x1="%s" y1="%s" x2="%s" y2="%s" class="%s"/>`, num(x1), num(y1), num(x2), num(y2), class)
}

// String closes the element and returns it.
func (c *canvas) String() string { return c.b.String() + "</svg>" }

func esc(s string) string { return html.EscapeString(s) }

// num prints a coordinate with one decimal, without a trailing ".0".
func num(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}

// niceStep picks a 1-2-5 tick step giving about n ticks over span.
func niceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			return m * mag
		}
	}
	return 10 * mag
}

// shortNum prints an axis value compactly: 50k, 1.2M, 0.5.
func shortNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return trimZeros(v/1e6) + "M"
	case a >= 1e3:
		return trimZeros(v/1e3) + "k"
	}
	return trimZeros(v)
}

func trimZeros(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// labelWidth estimates the pixels a left-hand label column needs.
func labelWidth(labels []string) float64 {
	n := 0
	for _, l := range labels {
		n = max(n, len([]rune(l)))
	}
	return math.Min(math.Max(float64(n)*7+12, 80), 240)
}

const chartWidth = 680

// throughputChart draws each group's median throughput as a bar, the
// range of its runs as a whisker and each run as a dot.
func throughputChart(r *Report, w *Workload) string {
	var labels []string
	hi := 0.0
	for _, g := range w.Groups {
		labels = append(labels, g.Label)
		hi = math.Max(hi, g.Throughput.Max)
	}
	left, right, top, row := labelWidth(labels), 80.0, 8.0, 28.0
	plotW := chartWidth - left - right
	step := niceStep(hi, 6)
	xmax := math.Max(step, math.Ceil(hi/step)*step)
	x := func(v float64) float64 { return left + plotW*v/xmax }
	h := top + row*float64(len(w.Groups)) + 44
	var c canvas
	c.open(chartWidth, h, "Throughput of "+w.Name+" (requests/s): median bar, min..max whisker, one dot per run")
	for t := 0.0; t <= xmax+step/2; t += step {
		c.line(x(t), top, x(t), h-40, "grid")
		c.text(x(t), h-24, "middle", "tick", shortNum(t))
	}
	c.text(left+plotW/2, h-6, "middle", "axis", "requests/s")
	for i, g := range w.Groups {
		y := top + row*float64(i)
		throughputRow(&c, g, y, x, colorOf(r, g.Label))
		c.text(left-6, y+row/2+4, "end", "label", g.Label)
		if g.N > 0 {
			c.text(chartWidth-right+6, y+row/2+4, "start", "value", fmtRPS(g.Throughput.Median))
		}
	}
	return c.String()
}

func throughputRow(c *canvas, g *Group, y float64, x func(float64) float64, color string) {
	if g.N == 0 {
		return
	}
	mid := y + 14
	c.add(`<rect x="%s" y="%s" width="%s" height="16" fill="%s" class="bar"/>`, num(x(0)), num(y+6), num(x(g.Throughput.Median)-x(0)), color)
	c.line(x(g.Throughput.Min), mid, x(g.Throughput.Max), mid, "whisker")
	c.line(x(g.Throughput.Min), mid-5, x(g.Throughput.Min), mid+5, "whisker")
	c.line(x(g.Throughput.Max), mid-5, x(g.Throughput.Max), mid+5, "whisker")
	for _, v := range g.rps {
		c.add(`<circle cx="%s" cy="%s" r="2.5" class="dot"/>`, num(x(v)), num(mid))
	}
}

// changeChart plots each group's change against the reference with its
// interval, one panel per metric (throughput, p99, spread), as stats'
// one convention has it: the group's value ÷ the reference's, on one log
// axis shared by the workload's panels (so equal distances are equal
// factors everywhere in the chart); each panel says which way is better
// for its metric. The axis spans at most ×1/maxChangeFactor..
// ×maxChangeFactor: an interval or point past an edge is drawn to it and
// marked with an arrowhead and its value, never clipped silently.
func changeChart(r *Report, w *Workload) string {
	type panel struct {
		m    metric
		rows []changeRow
	}
	var panels []panel
	var all []changeRow
	for _, m := range metrics {
		p := panel{m: m}
		for _, g := range w.Groups {
			if v := m.versus(g); v != nil && !g.Reference && v.Ratio > 0 {
				p.rows = append(p.rows, changeRow{g.Label, v, fmtBrief(v)})
			}
		}
		if len(p.rows) > 0 {
			panels = append(panels, p)
			all = append(all, p.rows...)
		}
	}
	if len(panels) == 0 {
		return ""
	}
	names, verdicts := make([]string, len(all)), make([]string, len(all))
	for i, cr := range all {
		names[i], verdicts[i] = cr.label, cr.text
	}
	// The columns, left to right: labels (at labelGap from the plot, where
	// an arrowhead past the low edge reaches), the plot, and the verdicts
	// (as wide as the longest, so none is cut). Each panel's title runs
	// over the plot and the "better" marker sits in the verdict column:
	// the spread panel's title overlapped it when both shared the plot's
	// width (issue 41).
	left, row, head, foot := labelWidth(names)+labelGap, 22.0, 20.0, 22.0
	right := math.Min(math.Max(textWidth(verdicts, 7)+20, 190), 340)
	width := left + changePlotWidth + right
	h := 22.0
	for _, p := range panels {
		h += head + row*float64(len(p.rows)) + foot
	}
	var c canvas
	c.open(width, h, "Change of "+w.Name+" against "+r.Reference+": each metric's value divided by the reference's, with intervals, on one log axis")
	c.text(6, 15, "start", "label title", w.Name+" against "+r.Reference)
	lo, hi := changeRange(all)
	ax := changeAxis{lo: lo, hi: hi, left: left, width: changePlotWidth}
	ticks := factorTicks(lo, hi, changePlotWidth)
	top := 22.0
	for _, p := range panels {
		c.text(left, top+14, "start", "axis", changeTitle[p.m.Key])
		if p.m.HigherIsBetter {
			c.text(width-right+12, top+14, "start", "axis", "better →")
		} else {
			c.text(width-right+12, top+14, "start", "axis", "← better")
		}
		body := top + head
		bottom := body + row*float64(len(p.rows))
		for _, t := range ticks {
			c.line(ax.x(t), body, ax.x(t), bottom, "grid")
			c.text(ax.x(t), bottom+14, "middle", "tick", factorTick(t))
		}
		c.line(ax.x(1), body, ax.x(1), bottom, "zero")
		for i, cr := range p.rows {
			y := body + row*float64(i)
			changeMark(&c, cr, y, ax)
			c.text(left-labelGap, y+row/2+4, "end", "label", cr.label)
			c.text(width-right+12, y+row/2+4, "start", "value "+verdictClass(cr.v), cr.text)
		}
		top = bottom + foot
	}
	return c.String()
}

// changePlotWidth is the change chart's plot: the same for every workload,
// so their axes compare at a glance.
const changePlotWidth = 410.0

// labelGap is the room between the change chart's labels and its plot: an
// arrowhead past the low edge reaches 6 into it.
const labelGap = 12.0

// textWidth is an upper estimate of the widest of ss at perChar pixels a
// character.
func textWidth(ss []string, perChar float64) float64 {
	n := 0
	for _, s := range ss {
		n = max(n, len([]rune(s)))
	}
	return float64(n) * perChar
}

// maxChangeFactor bounds the change chart's axis: past ×10 or ×1/10 the
// factor is written out at the edge, so one wild interval does not
// squeeze every other row to a dot.
const maxChangeFactor = 10

var changeTitle = map[string]string{
	labdata.MetricRPS.Key:    "Throughput (× the reference's; higher is better)",
	labdata.MetricP99.Key:    "p99 latency (× the reference's; lower is better)",
	labdata.MetricSpread.Key: "Run-to-run spread (× the reference's; lower is steadier)",
}

// changeAxis places a factor on the chart's shared log axis.
type changeAxis struct{ lo, hi, left, width float64 }

// x is f's position, clamped to the axis.
func (a changeAxis) x(f float64) float64 {
	return a.left + a.width*(math.Min(math.Max(math.Log(f), a.lo), a.hi)-a.lo)/(a.hi-a.lo)
}

// beyond is -1 or +1 when f lies past the axis' low or high edge.
func (a changeAxis) beyond(f float64) int {
	switch l := math.Log(f); {
	case l < a.lo:
		return -1
	case l > a.hi:
		return 1
	}
	return 0
}

// changeRow is one line of the change chart.
type changeRow struct {
	label string
	v     *Versus
	text  string // the verdict
}

func changeMark(c *canvas, cr changeRow, y float64, a changeAxis) {
	mid, cls := y+11, verdictClass(cr.v)
	ends := []float64{cr.v.Ratio}
	if cr.v.HasCI && cr.v.CILow > 0 {
		lo, hi := a.x(cr.v.CILow), a.x(cr.v.CIHigh)
		c.line(lo, mid, hi, mid, "ci "+cls)
		c.line(lo, mid-5, lo, mid+5, "ci "+cls)
		c.line(hi, mid-5, hi, mid+5, "ci "+cls)
		ends = append(ends, cr.v.CILow, cr.v.CIHigh)
	}
	c.add(`<circle cx="%s" cy="%s" r="4" class="point %s"/>`, num(a.x(cr.v.Ratio)), num(mid), cls)
	// What runs past an edge: an arrowhead there and the farthest value.
	for _, side := range []int{-1, 1} {
		far := 0.0
		for _, f := range ends {
			if a.beyond(f) == side && (far == 0 || (side > 0) == (f > far)) {
				far = f
			}
		}
		if far == 0 {
			continue
		}
		edge := a.x(far)
		// The value inside the plot, beside the arrowhead: outside it, it
		// ran into the row's label or its verdict (issue 41).
		tip, back, anchor, tx := edge+6, edge, "end", edge-8
		if side < 0 {
			tip, back, anchor, tx = edge-6, edge, "start", edge+8
		}
		c.add(`<path d="M%s %s L%s %s L%s %s Z" class="beyond %s"/>`, num(back), num(mid-5), num(tip), num(mid), num(back), num(mid+5), cls)
		c.text(tx, mid-6, anchor, "tick beyond", stats.RatioNumber(far))
	}
}

// factorTicks picks factors to mark between exp(lo) and exp(hi): 1, then
// 1.01, 1.02, 1.05, 1.1, 1.2, 1.5, 2, 3, 5, 10 ... and their inverses,
// each only where it lies at least 48 pixels from every tick kept.
func factorTicks(lo, hi, width float64) []float64 {
	steps := []float64{1.01, 1.02, 1.05, 1.1, 1.2, 1.5, 2, 3, 5, 10, 20, 50, 100, 1000}
	px := func(f float64) float64 { return width * (math.Log(f) - lo) / (hi - lo) }
	out := []float64{1}
	for i := len(steps) - 1; i >= 0; i-- { // big factors first: they frame the axis
		for _, f := range []float64{steps[i], 1 / steps[i]} {
			if l := math.Log(f); l <= lo || l >= hi {
				continue
			}
			clear := true
			for _, t := range out {
				if math.Abs(px(f)-px(t)) < 48 {
					clear = false
				}
			}
			if clear {
				out = append(out, f)
			}
		}
	}
	slices.Sort(out)
	return out
}

// factorTick prints a factor: ×1, ×1.05, ×0.5, ×20. Never negative.
func factorTick(f float64) string {
	switch {
	case f >= 10:
		return fmt.Sprintf("×%.0f", f)
	}
	return "×" + trimZeros(math.Round(f*100)/100)
}

// changeRange spans 1 and every interval in log space, padded, within
// ±maxChangeFactor; points without an interval count only when no row has
// one (a lone ratio from too few runs would otherwise set the scale; it
// is drawn at the edge, marked).
func changeRange(rows []changeRow) (lo, hi float64) {
	withCI := slices.ContainsFunc(rows, func(cr changeRow) bool { return cr.v.HasCI })
	for _, cr := range rows {
		if withCI && !cr.v.HasCI {
			continue
		}
		for _, r := range []float64{cr.v.Ratio, cr.v.CILow, cr.v.CIHigh} {
			if r > 0 {
				lo, hi = math.Min(lo, math.Log(r)), math.Max(hi, math.Log(r))
			}
		}
	}
	pad := math.Max((hi-lo)*0.06, 0.01)
	limit := math.Log(maxChangeFactor)
	return math.Max(lo-pad, -limit), math.Min(hi+pad, limit)
}

// verdictClass colours a verdict: good, bad or unclear.
func verdictClass(v *Versus) string {
	switch {
	case v == nil || !claims(v):
		return "unclear"
	case v.Verdict == stats.LabWords.Better || v.Verdict == stats.MergeWords.Better:
		return "good"
	}
	return "bad"
}

// percentileChart draws each group's latency against percentile on
// HdrHistogram's "nines" axis, from the group's merged histogram; the
// latency axis is logarithmic so p50 and max both stay readable.
func percentileChart(r *Report, w *Workload) string {
	maxX, lo, hi := 0.0, math.Inf(1), 0.0
	for _, g := range w.Groups {
		for _, p := range g.Curve {
			maxX = math.Max(maxX, p.X)
			if p.Ms > 0 {
				lo, hi = math.Min(lo, p.Ms), math.Max(hi, p.Ms)
			}
		}
	}
	if hi == 0 {
		return ""
	}
	maxX = math.Max(2, math.Ceil(maxX))
	ylo, yhi := math.Log10(step125(lo, false)), math.Log10(step125(hi, true))
	left, right, top, bottom := 64.0, 36.0, 12.0, 44.0
	h := 320.0
	x := func(v float64) float64 { return left + (chartWidth-left-right)*v/maxX }
	y := func(ms float64) float64 { return h - bottom - (h-top-bottom)*(math.Log10(ms)-ylo)/(yhi-ylo) }
	var c canvas
	c.open(chartWidth, h, "Latency by percentile for "+w.Name+" (ms, log scale), from the merged HDR histograms")
	percentileAxes(&c, maxX, ylo, yhi, x, y, h-bottom, top)
	for _, g := range w.Groups {
		percentileLine(&c, g, x, y, colorOf(r, g.Label))
	}
	legendBox(&c, r, w, left+8, top+6)
	return c.String()
}

// step125 rounds v down (or up) to the nearest 1, 2 or 5 times a power
// of ten, the ticks of a log axis.
func step125(v float64, up bool) float64 {
	d := math.Pow(10, math.Floor(math.Log10(v)))
	steps := []float64{1, 2, 5, 10}
	if up {
		for _, m := range steps {
			if m*d >= v*(1-1e-9) {
				return m * d
			}
		}
	}
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i]*d <= v*(1+1e-9) {
			return steps[i] * d
		}
	}
	return d
}

// ninesLabel names a point of the nines axis: 0 -> 0%, 2 -> 99%.
func ninesLabel(n int) string {
	switch n {
	case 0:
		return "0%"
	case 1:
		return "90%"
	case 2:
		return "99%"
	}
	return "99." + strings.Repeat("9", n-2) + "%"
}

func percentileAxes(c *canvas, maxX, ylo, yhi float64, x func(float64) float64, y func(float64) float64, base, top float64) {
	for n := 0; float64(n) <= maxX; n++ {
		c.line(x(float64(n)), top, x(float64(n)), base, "grid")
		c.text(x(float64(n)), base+16, "middle", "tick", ninesLabel(n))
	}
	c.text(x(maxX/2), base+36, "middle", "axis", "percentile")
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
	c.add(`<text x="14" y="%s" text-anchor="middle" class="axis" transform="rotate(-90 14 %s)">latency (ms)</text>`, num((base+top)/2), num((base+top)/2))
}

func percentileLine(c *canvas, g *Group, x, y func(float64) float64, color string) {
	if len(g.Curve) == 0 {
		return
	}
	pts := make([]string, 0, len(g.Curve))
	for _, p := range g.Curve {
		if p.Ms > 0 {
			pts = append(pts, num(x(p.X))+","+num(y(p.Ms)))
		}
	}
	c.add(`<polyline points="%s" fill="none" stroke="%s" class="curve"/>`, strings.Join(pts, " "), color)
}

// legendBox lists the groups' colours on a white box, so curves passing
// underneath do not hide it.
func legendBox(c *canvas, r *Report, w *Workload, x, y float64) {
	var labels []string
	for _, g := range w.Groups {
		labels = append(labels, g.Label)
	}
	c.add(`<rect x="%s" y="%s" width="%s" height="%s" class="legendbox"/>`, num(x), num(y), num(labelWidth(labels)+34), num(16*float64(len(labels))+6))
	for i, l := range labels {
		legend(c, x+6, y+16+16*float64(i), colorOf(r, l), l)
	}
}

func legend(c *canvas, x, y float64, color, label string) {
	c.add(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" class="curve"/>`, num(x), num(y-4), num(x+18), num(y-4), color)
	c.text(x+24, y, "start", "legend", label)
}
