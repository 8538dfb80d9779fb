package lab

import (
	"slices"
	"strings"

	"redline/internal/benchdata"
	"redline/internal/labdata"
	"redline/internal/stats"
)

// comparisons compares every variant with the baseline, per workload, on
// throughput, p99 latency and the run-to-run spread of throughput (and,
// for a workload with connect: true, its connection set-up), over the
// runs that completed. In a paired design (r.Sequential.Paired) every
// metric but the spread is compared round by round, over the rounds both
// sides completed. The design gives every comparison its level, and the
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
	runs := map[key][]*labdata.Run{} // in the order taken, one per round
	var workloads []string
	for i := range r.Runs {
		run := &r.Runs[i]
		sum := run.Summary
		if sum == nil || sum.Interrupted || sum.Error != "" || sum.Requests == 0 || run.Retried {
			continue
		}
		k := key{run.Workload, run.Variant}
		if !slices.Contains(workloads, run.Workload) {
			workloads = append(workloads, run.Workload)
		}
		runs[k] = append(runs[k], run)
	}
	// values returns the metric of the variant's and the baseline's runs:
	// all of them, or in a paired design those of the rounds both ran, in
	// the same order.
	values := func(w, v string, m metric, paired bool) (x, ref []float64) {
		vr, br := runs[key{w, v}], runs[key{w, base}]
		if !paired {
			for _, run := range vr {
				x = append(x, m.of(run.Summary))
			}
			for _, run := range br {
				ref = append(ref, m.of(run.Summary))
			}
			return x, ref
		}
		byRep := map[int]*labdata.Run{}
		for _, run := range br {
			byRep[run.Rep] = run
		}
		for _, run := range vr {
			if b, ok := byRep[run.Rep]; ok {
				x, ref = append(x, m.of(run.Summary)), append(ref, m.of(b.Summary))
			}
		}
		return x, ref
	}
	var out []labdata.Comparison
	add := func(c labdata.Comparison, ok bool) {
		if ok {
			c.Reason = reason(c, r.Sequential)
			out = append(out, c)
		}
	}
	for _, w := range workloads {
		for _, v := range s.Variants {
			if v.Baseline || len(runs[key{w, v.Name}]) == 0 || len(runs[key{w, base}]) == 0 {
				continue
			}
			ms := runMetrics
			if connectWorkload(s, w) {
				ms = append(slices.Clone(ms), connectMetrics...)
			}
			for i, m := range ms {
				x, ref := values(w, v.Name, m, d.Paired)
				add(compare(d, w, v.Name, base, m.Key, m.HigherIsBetter, x, ref))
				if i == 1 {
					// Steadiness: the spread between successive runs
					// (unpaired: each side's own pairs of runs).
					x, ref := values(w, v.Name, runMetrics[0], false)
					add(compare(d, w, v.Name, base, labdata.MetricSpread.Key, labdata.MetricSpread.HigherIsBetter, stats.PairSpreads(x), stats.PairSpreads(ref)))
				}
			}
		}
	}
	return out
}

// metric is one figure of a run that the lab compares.
type metric struct {
	labdata.Metric
	of func(*benchdata.Summary) float64
}

// runMetrics are compared for every workload: throughput and p99.
var runMetrics = []metric{
	{labdata.MetricRPS, func(s *benchdata.Summary) float64 { return s.RPS }},
	{labdata.MetricP99, func(s *benchdata.Summary) float64 { return s.Latency.P99 }},
}

// ConnectMetrics is how many comparisons a workload with connect: true
// adds per variant: connect p99, set-up time and the share of connects
// that succeeded.
var ConnectMetrics = len(labdata.ConnectMetricList)

// connectMetrics are the set-up comparisons: connect p99 (ms) and the
// time until all -c clients were ready (s), lower is better; the share of
// connects that succeeded, higher is better (a count of failures would
// form no ratio when the fix takes it to zero).
var connectMetrics = []metric{
	{labdata.MetricConnectP99, func(s *benchdata.Summary) float64 {
		if s.Connections == nil {
			return 0
		}
		return s.Connections.Connect.P99
	}},
	{labdata.MetricSetup, func(s *benchdata.Summary) float64 {
		if s.Connections == nil {
			return 0
		}
		return s.Connections.SetupSeconds
	}},
	{labdata.MetricConnectSuccess, connectSuccess},
}

// connectSuccess is the share of a run's connects that succeeded.
func connectSuccess(s *benchdata.Summary) float64 {
	cs := s.Connections
	if cs == nil {
		return 0
	}
	failed := 0.0
	for _, n := range cs.Failures {
		failed += float64(n)
	}
	if float64(cs.Opened)+failed == 0 {
		return 0
	}
	return float64(cs.Opened) / (float64(cs.Opened) + failed)
}

// connectItems counts the items whose workload asks for connect metrics.
func connectItems(s labdata.Scenario, items []item) int {
	n := 0
	for _, it := range items {
		if connectWorkload(s, it.name) {
			n++
		}
	}
	return n
}

// connectWorkload reports whether the run's workload (an item name:
// NAME, NAME[param=value], either with /TEST) asks for connect metrics.
func connectWorkload(s labdata.Scenario, item string) bool {
	for _, w := range s.Workloads {
		if w.Connect && (item == w.Name || strings.HasPrefix(item, w.Name+"[") || strings.HasPrefix(item, w.Name+"/")) {
			return true
		}
	}
	return false
}

// compare builds a Comparison of a variant's values against the
// baseline's with stats.Compare, the one verdict (ComparePaired, round by
// round, for every metric but the spread in a paired lab: vals[i] and
// base[i] are then runs of one round); false when there is no ratio to
// form.
func compare(d stats.Design, workload, variant, baseline, metric string, higherBetter bool, vals, base []float64) (labdata.Comparison, bool) {
	s, ok := stats.Compare(vals, base, higherBetter, d)
	if d.Paired && metric != labdata.MetricSpread.Key {
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
