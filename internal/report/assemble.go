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
	}
	r.design = r.comparisonDesign()
	for _, w := range r.Workloads {
		w.compare(r.Reference, words, r.design)
	}
	r.noteLeftOut()
	r.noteFewRuns()
}

// comparisonDesign spreads a 5% false-positive rate over the comparisons
// the report makes (throughput, p99 and spread of every group against its
// row's reference), as the lab does over its own.
func (r *Report) comparisonDesign() stats.Design {
	n := 0
	for _, w := range r.Workloads {
		if w.Group(r.Reference) != nil {
			n += stats.MetricsPerComparison * (len(w.Groups) - 1)
		}
	}
	return stats.Design{Alpha: stats.DefaultAlpha, Comparisons: max(n, 1), Looks: 1}
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
	g.Steadiness = spreadOf(stats.PairSpreads(g.rps))
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

func (w *Workload) compare(ref string, words stats.Words, d stats.Design) {
	rg := w.Group(ref)
	if rg == nil {
		return
	}
	rg.Reference = true
	for _, g := range w.Groups {
		if g != rg {
			g.VsThroughput = compare(g.rps, rg.rps, true, words, d)
			g.VsP99 = compare(g.p99, rg.p99, false, words, d)
			g.VsSpread = compare(stats.PairSpreads(g.rps), stats.PairSpreads(rg.rps), false, words, d)
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

// OneRunNote is the note of a report of one run (one bench file).
const OneRunNote = "One run: reported as measured. Nothing is compared and no run-to-run spread is measured (both need two runs or more); repeat the run for a comparison."

// noteFewRuns says when some groups are too few for a claim at the
// report's error rate.
func (r *Report) noteFewRuns() {
	if r.Lab != nil && r.Lab.Sequential != nil {
		return // each comparison the lab recorded says why it makes no claim
	}
	if len(r.Runs) == 1 {
		// "with 1 comparisons" and a 0.0% spread would read as findings
		r.Notes = append(r.Notes, OneRunNote)
		return
	}
	need := r.design.RunsNeeded()
	fewest := 0
	for _, w := range r.Workloads {
		for _, g := range w.Groups {
			if g.N > 0 && (fewest == 0 || g.N < fewest) {
				fewest = g.N
			}
		}
	}
	if fewest > 0 && fewest < need {
		r.Notes = append(r.Notes, fmt.Sprintf("Some groups have only %d run(s): with %d comparisons at a 5%% false-positive rate in all, a claim needs %d runs a side, so they get no verdict.",
			fewest, r.design.Comparisons, need))
	}
}
