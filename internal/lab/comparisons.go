package lab

import (
	"slices"

	"redline/internal/labdata"
	"redline/internal/stats"
)

// comparisons compares every variant with the baseline, per workload, on
// throughput, p99 latency and the run-to-run spread of throughput, over
// the runs that completed.
// The design (r.Sequential) gives every comparison its level, and the
// reason when it makes no claim.
func comparisons(r *labdata.Result, s labdata.Scenario) []labdata.Comparison {
	d := statsDesign(r.Sequential)
	base := ""
	for _, v := range s.Variants {
		if v.Baseline {
			base = v.Name
		}
	}
	type key struct{ w, v string }
	rps, p99 := map[key][]float64{}, map[key][]float64{}
	type value struct{ rps, p99 float64 }
	byRep := map[key]map[int]value{} // the round's run, for paired comparisons
	var workloads []string
	for _, run := range r.Runs {
		sum := run.Summary
		if sum == nil || sum.Interrupted || sum.Error != "" || sum.Requests == 0 || run.Retried {
			continue
		}
		k := key{run.Workload, run.Variant}
		if !slices.Contains(workloads, run.Workload) {
			workloads = append(workloads, run.Workload)
		}
		rps[k] = append(rps[k], sum.RPS)
		p99[k] = append(p99[k], sum.Latency.P99)
		if byRep[k] == nil {
			byRep[k] = map[int]value{}
		}
		byRep[k][run.Rep] = value{sum.RPS, sum.Latency.P99}
	}
	// paired returns the two sides' values of the rounds both ran.
	paired := func(w, v string, get func(value) float64) (x, ref []float64) {
		reps := make([]int, 0, len(byRep[key{w, v}]))
		for rep := range byRep[key{w, v}] {
			if _, ok := byRep[key{w, base}][rep]; ok {
				reps = append(reps, rep)
			}
		}
		slices.Sort(reps)
		for _, rep := range reps {
			x, ref = append(x, get(byRep[key{w, v}][rep])), append(ref, get(byRep[key{w, base}][rep]))
		}
		return x, ref
	}
	var out []labdata.Comparison
	for _, w := range workloads {
		for _, v := range s.Variants {
			if v.Baseline || len(rps[key{w, v.Name}]) == 0 || len(rps[key{w, base}]) == 0 {
				continue
			}
			x, xb := rps[key{w, v.Name}], rps[key{w, base}]
			y, yb := p99[key{w, v.Name}], p99[key{w, base}]
			if d.Paired {
				x, xb = paired(w, v.Name, func(v value) float64 { return v.rps })
				y, yb = paired(w, v.Name, func(v value) float64 { return v.p99 })
			}
			if c, ok := compare(d, w, v.Name, base, "rps", true, x, xb); ok {
				c.Reason = reason(c, r.Sequential)
				out = append(out, c)
			}
			if c, ok := compare(d, w, v.Name, base, "p99_ms", false, y, yb); ok {
				c.Reason = reason(c, r.Sequential)
				out = append(out, c)
			}
			// Steadiness: the spread between successive runs.
			if c, ok := compare(d, w, v.Name, base, "rps_spread", false, stats.PairSpreads(rps[key{w, v.Name}]), stats.PairSpreads(rps[key{w, base}])); ok {
				c.Reason = reason(c, r.Sequential)
				out = append(out, c)
			}
		}
	}
	return out
}

// compare builds a Comparison of a variant's values against the
// baseline's with stats.Compare, the one verdict (ComparePaired, round by
// round, for throughput and p99 in a paired lab: vals[i] and base[i] are
// then runs of one round); false when there is no ratio to form.
func compare(d stats.Design, workload, variant, baseline, metric string, higherBetter bool, vals, base []float64) (labdata.Comparison, bool) {
	s, ok := stats.Compare(vals, base, higherBetter, d)
	if d.Paired && metric != "rps_spread" {
		s, ok = stats.ComparePaired(vals, base, higherBetter, d)
	}
	c := labdata.Comparison{Paired: s.Paired, Workload: workload, Variant: variant, Baseline: baseline, Metric: metric, HigherIsBetter: higherBetter,
		N: s.N, BaselineN: s.RefN, Median: s.Median, BaselineMedian: s.RefMedian, Ratio: s.Ratio,
		CILow: s.CILow, CIHigh: s.CIHigh, HasCI: s.HasCI, Level: s.Level, Verdict: stats.LabWords.Verdict(s.Outcome)}
	if len(vals) > 0 {
		c.Min, c.Max = slices.Min(vals), slices.Max(vals)
	}
	return c, ok
}
