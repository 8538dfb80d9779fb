package report

import "fmt"

// outageChart draws, for each run that went through failures (bench
// --reconnect), its measured time as a bar with each outage as a marked
// band, from the first failure to the first success after the last one;
// "" when no run of the workload had one.
func outageChart(r *Report, w *Workload) string {
	type row struct {
		label string
		s     *Sample
	}
	var rows []row
	longest := 0.0
	for _, g := range w.Groups {
		for _, s := range g.samples {
			if s.summary == nil || s.summary.Failover == nil || len(s.summary.Failover.Outages) == 0 {
				continue
			}
			rows = append(rows, row{fmt.Sprintf("%s #%d", g.Label, s.Index), s})
			longest = max(longest, s.summary.ElapsedSeconds)
		}
	}
	if len(rows) == 0 || longest <= 0 {
		return ""
	}
	var labels []string
	for _, rw := range rows {
		labels = append(labels, rw.label)
	}
	left, right, top, rowH := labelWidth(labels), 80.0, 24.0, 24.0
	plotW := chartWidth - left - right
	h := top + rowH*float64(len(rows)) + 44
	step := niceStep(longest, 8)
	x := func(v float64) float64 { return left + plotW*min(max(v, 0), longest)/longest }
	var c canvas
	c.open(chartWidth, h, "Outages of "+w.Name+": each run's measured time, its outages marked")
	c.text(6, 15, "start", "label title", w.Name+": outages (failed requests, --reconnect)")
	for t := 0.0; t <= longest+step/2; t += step {
		c.line(x(t), top, x(t), h-40, "grid")
		c.text(x(t), h-24, "middle", "tick", shortNum(t))
	}
	c.text(left+plotW/2, h-6, "middle", "axis", "seconds of the measured run")
	for i, rw := range rows {
		y := top + rowH*float64(i)
		sum := rw.s.summary
		c.add(`<rect x="%s" y="%s" width="%s" height="%s" class="run" fill="%s" opacity="0.25"/>`,
			num(x(0)), num(y+6), num(x(sum.ElapsedSeconds)-x(0)), num(rowH-12), colorOf(r, rw.s.Label))
		var failed int64
		for _, o := range sum.Failover.Outages {
			wd := max(x(o.EndSeconds)-x(o.StartSeconds), 2)
			c.add(`<rect x="%s" y="%s" width="%s" height="%s" class="outage" fill="#d62728" opacity="0.8"><title>%s</title></rect>`,
				num(x(o.StartSeconds)), num(y+2), num(wd), num(rowH-4),
				esc(fmt.Sprintf("outage %.3f s from %.3f s: %d requests failed", o.Seconds, o.StartSeconds, o.FailedRequests)))
			failed += o.FailedRequests
		}
		c.text(left-6, y+rowH/2+4, "end", "label", rw.label)
		c.text(chartWidth-right+6, y+rowH/2+4, "start", "value", fmt.Sprintf("%d failed", failed))
	}
	return c.String()
}
