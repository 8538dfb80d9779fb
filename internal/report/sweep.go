package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"redline/internal/stats"
)

// A swept workload ran once per value of one parameter; the report draws
// each metric against that value, one line per variant: the median of the
// runs with its 95% interval (order statistics), as write-up 004 drew
// throughput and p99 against the value size.

// sweep is one swept workload and test: its values in order, and per
// label the runs at each value.
type sweep struct {
	Name, Param string
	Values      []string
	runs        map[string]map[string][]*Sample // label -> value -> runs
}

// sweeps collects the swept workloads of r's runs.
func sweeps(r *Report) []*sweep {
	var out []*sweep
	find := func(name, param string) *sweep {
		for _, s := range out {
			if s.Name == name {
				return s
			}
		}
		s := &sweep{Name: name, Param: param, runs: map[string]map[string][]*Sample{}}
		out = append(out, s)
		return s
	}
	for _, s := range r.Runs {
		if s.Sweep == nil || s.Problem != "" || s.summary == nil {
			continue
		}
		name := s.Sweep.Workload
		if s.summary.Title != "" {
			name += " " + s.summary.Title
		}
		sw := find(name, s.Sweep.Param)
		if !slices.Contains(sw.Values, s.Sweep.Value) {
			sw.Values = append(sw.Values, s.Sweep.Value)
		}
		if sw.runs[s.Label] == nil {
			sw.runs[s.Label] = map[string][]*Sample{}
		}
		sw.runs[s.Label][s.Sweep.Value] = append(sw.runs[s.Label][s.Sweep.Value], s)
	}
	return out
}

// sweepPoint is one label's runs at one value: median and interval.
type sweepPoint struct {
	median, lo, hi float64
	hasCI          bool
}

func (sw *sweep) point(label, value string, f func(*Sample) float64) (sweepPoint, bool) {
	ss := sw.runs[label][value]
	if len(ss) == 0 {
		return sweepPoint{}, false
	}
	xs := make([]float64, len(ss))
	for i, s := range ss {
		xs[i] = f(s)
	}
	p := sweepPoint{median: stats.Median(xs)}
	p.lo, p.hi, p.hasCI = stats.MedianCI(xs, 0.05)
	return p, true
}

// sweepMetrics are the metrics a sweep chart draws.
var sweepMetrics = []struct {
	title string
	f     func(*Sample) float64
	fmt   func(float64) string
}{
	{"throughput (requests/s)", func(s *Sample) float64 { return s.RPS }, shortNum},
	{"p99 latency (ms)", func(s *Sample) float64 { return s.Latency.P99 }, shortNum},
}

// sweepChart draws one metric of a sweep against its values (evenly
// spaced, in the scenario's order), one line per label.
func sweepChart(r *Report, sw *sweep, m int) string {
	metric := sweepMetrics[m]
	left, right, top, bottom, h := 56.0, 120.0, 24.0, 40.0, 240.0
	plotW, plotH := chartWidth-left-right, h-top-bottom
	ymax := 0.0
	for _, l := range r.Labels {
		for _, v := range sw.Values {
			if p, ok := sw.point(l, v, metric.f); ok {
				ymax = math.Max(ymax, math.Max(p.hi, p.median))
			}
		}
	}
	step := niceStep(ymax, 5)
	ymax = math.Max(step, math.Ceil(ymax/step)*step)
	x := func(i int) float64 { return left + plotW*(float64(i)+0.5)/float64(len(sw.Values)) }
	y := func(v float64) float64 { return top + plotH*(1-v/ymax) }
	var c canvas
	c.open(chartWidth, h, fmt.Sprintf("%s: %s against %s, median of the runs with its 95%% interval, per %s", sw.Name, metric.title, sw.Param, r.Dimension))
	c.text(6, 15, "start", "label title", sw.Name+": "+metric.title+" against "+sw.Param)
	for t := 0.0; t <= ymax+step/2; t += step {
		c.line(left, y(t), left+plotW, y(t), "grid")
		c.text(left-6, y(t)+4, "end", "tick", metric.fmt(t))
	}
	for i, v := range sw.Values {
		c.text(x(i), h-bottom+16, "middle", "tick", v)
	}
	c.text(left+plotW/2, h-6, "middle", "axis", sw.Param)
	for li, l := range r.Labels {
		color := colorOf(r, l)
		var path []string
		for i, v := range sw.Values {
			p, ok := sw.point(l, v, metric.f)
			if !ok {
				continue
			}
			px := x(i) + float64(li-len(r.Labels)/2)*4 // keep the whiskers of labels apart
			path = append(path, num(px)+","+num(y(p.median)))
			if p.hasCI {
				c.add(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" class="whisker"/>`, num(px), num(y(p.lo)), num(px), num(y(p.hi)), color)
			}
			c.add(`<circle cx="%s" cy="%s" r="3" fill="%s"/>`, num(px), num(y(p.median)), color)
		}
		if len(path) > 1 {
			c.add(`<polyline points="%s" fill="none" stroke="%s" class="curve"/>`, joinSpace(path), color)
		}
		c.add(`<text x="%s" y="%s" class="label" style="fill:%s">%s</text>`, num(chartWidth-right+10), num(top+14+16*float64(li)), color, esc(l))
	}
	return c.String()
}

func joinSpace(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += " "
		}
		out += s
	}
	return out
}

// sweepRows is a sweep's Markdown table for one metric: a row per value,
// a column per label, "median [lo, hi]".
func sweepRows(r *Report, sw *sweep, m int) [][]string {
	metric := sweepMetrics[m]
	var rows [][]string
	for _, v := range sw.Values {
		row := []string{sw.Param + "=" + v}
		for _, l := range r.Labels {
			p, ok := sw.point(l, v, metric.f)
			switch {
			case !ok:
				row = append(row, "n/a")
			case p.hasCI:
				row = append(row, fmt.Sprintf("%s [%s, %s]", fmtSweep(p.median, m), fmtSweep(p.lo, m), fmtSweep(p.hi, m)))
			default:
				row = append(row, fmtSweep(p.median, m)+" (too few runs for an interval)")
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func fmtSweep(v float64, m int) string {
	if m == 0 {
		return fmtRPS(v)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
