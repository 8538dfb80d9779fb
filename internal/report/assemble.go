package report

import (
	"fmt"

	"redline/internal/benchdata"
	"redline/internal/stats"
)

// assemble groups r.Runs into rows (by Row, in order of appearance) and
// labels (in r.Labels order), computes each group's statistics and
// compares it with the reference group of its row.
func (r *Report) assemble(words stats.Words) {
	rows := map[string]*Workload{}
	for _, s := range r.Runs {
		if rows[s.Row] == nil {
			rows[s.Row] = &Workload{Name: s.Row}
			r.Workloads = append(r.Workloads, rows[s.Row])
		}
		rows[s.Row].Commands = appendNew(rows[s.Row].Commands, s.command)
	}
	for _, w := range r.Workloads {
		for _, l := range r.Labels {
			if ss := r.samplesOf(w.Name, l); len(ss) > 0 {
				w.Groups = append(w.Groups, newGroup(l, ss))
			}
		}
		w.compare(r.Reference, words)
	}
	r.noteLeftOut()
	r.noteFewRuns()
}

func (r *Report) samplesOf(row, label string) []*Sample {
	var ss []*Sample
	for _, s := range r.Runs {
		if s.Row == row && s.Label == label {
			ss = append(ss, s)
		}
	}
	return ss
}

func newGroup(label string, ss []*Sample) *Group {
	g := &Group{Label: label, samples: ss}
	var cpu []float64
	var sums []*benchdata.Summary
	files := map[string]bool{}
	for _, s := range ss {
		files[s.Source] = true
		if s.Problem != "" {
			g.LeftOut++
			continue
		}
		g.rps, g.p99 = append(g.rps, s.RPS), append(g.p99, s.Latency.P99)
		if s.ServerCPUPerRequest > 0 {
			cpu = append(cpu, s.ServerCPUPerRequest)
		}
		g.Requests += s.Requests
		g.Errors += s.Errors
		sums = append(sums, s.summary)
	}
	g.N, g.Files = len(g.rps), len(files)
	g.Throughput, g.P99 = spreadOf(g.rps), spreadOf(g.p99)
	if len(cpu) > 0 {
		m := median(cpu)
		g.ServerCPUPerRequest = &m
	}
	g.merged, g.HistogramRuns = mergeHistograms(sums)
	if g.merged != nil {
		l := benchdata.Digest(g.merged)
		g.Latency, g.Curve = &l, percentileCurve(g.merged)
	}
	return g
}

// Group returns the group with the given label, or nil.
func (w *Workload) Group(label string) *Group {
	for _, g := range w.Groups {
		if g.Label == label {
			return g
		}
	}
	return nil
}

func (w *Workload) compare(ref string, words stats.Words) {
	rg := w.Group(ref)
	if rg == nil {
		return
	}
	rg.Reference = true
	for _, g := range w.Groups {
		if g != rg {
			g.VsThroughput = compare(g.rps, rg.rps, true, words)
			g.VsP99 = compare(g.p99, rg.p99, false, words)
		}
	}
}

// noteLeftOut tells the reader which runs the statistics ignore and why.
func (r *Report) noteLeftOut() {
	for _, s := range r.Runs {
		if s.Problem != "" {
			r.Notes = append(r.Notes, fmt.Sprintf("Run %s is left out of the statistics: %s.", s.describe(), s.Problem))
		}
	}
}

// describe names a run for a note: "#7 (tuned, set, rep 3)".
func (s *Sample) describe() string {
	return fmt.Sprintf("#%d (%s, %s, rep %d)", s.Index, s.Label, s.Workload, s.Rep)
}

// noteFewRuns cautions when verdicts rest on fewer than stats.TrustedRuns runs.
func (r *Report) noteFewRuns() {
	fewest := 0
	for _, w := range r.Workloads {
		for _, g := range w.Groups {
			if g.N > 0 && (fewest == 0 || g.N < fewest) {
				fewest = g.N
			}
		}
	}
	switch {
	case fewest == 0 || fewest >= stats.TrustedRuns:
	case fewest < stats.MinRuns:
		r.Notes = append(r.Notes, fmt.Sprintf("Some groups have only %d run(s): no verdict is given for them (it takes %d, and %d or more to trust one).", fewest, stats.MinRuns, stats.TrustedRuns))
	default:
		r.Notes = append(r.Notes, fmt.Sprintf("Some groups have only %d runs: with so few the bootstrap interval is narrow, so a verdict is indicative (at 3 runs a side, identical setups are called different about one time in eight); %d or more runs per group make it trustworthy.", fewest, stats.TrustedRuns))
	}
}
