package lab

import (
	"slices"
	"strings"

	"redline/internal/benchdata"
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
	conn := map[key]*connectRuns{}
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
		if connectWorkload(s, run.Workload) {
			if conn[k] == nil {
				conn[k] = &connectRuns{}
			}
			conn[k].add(sum)
		}
	}
	var out []labdata.Comparison
	for _, w := range workloads {
		for _, v := range s.Variants {
			if v.Baseline || len(rps[key{w, v.Name}]) == 0 || len(rps[key{w, base}]) == 0 {
				continue
			}
			if c, ok := compare(d, w, v.Name, base, "rps", true, rps[key{w, v.Name}], rps[key{w, base}]); ok {
				c.Reason = reason(c, r.Sequential)
				out = append(out, c)
			}
			if c, ok := compare(d, w, v.Name, base, "p99_ms", false, p99[key{w, v.Name}], p99[key{w, base}]); ok {
				c.Reason = reason(c, r.Sequential)
				out = append(out, c)
			}
			// Steadiness: the spread between successive runs.
			if c, ok := compare(d, w, v.Name, base, "rps_spread", false, stats.PairSpreads(rps[key{w, v.Name}]), stats.PairSpreads(rps[key{w, base}])); ok {
				c.Reason = reason(c, r.Sequential)
				out = append(out, c)
			}
			if vc, bc := conn[key{w, v.Name}], conn[key{w, base}]; vc != nil && bc != nil {
				for _, m := range connectMetrics {
					if c, ok := compare(d, w, v.Name, base, m.name, m.higherBetter, m.of(vc), m.of(bc)); ok {
						c.Reason = reason(c, r.Sequential)
						out = append(out, c)
					}
				}
			}
		}
	}
	return out
}

// ConnectMetrics is how many comparisons a workload with connect: true
// adds per variant: connect p99, set-up time and the share of connects
// that succeeded.
const ConnectMetrics = 3

// connectRuns is one workload and variant's connection set-up, per run.
type connectRuns struct{ p99, setup, success []float64 }

func (c *connectRuns) add(sum *benchdata.Summary) {
	var p99, setup, failed, opened float64
	if cs := sum.Connections; cs != nil {
		p99, setup, opened = cs.Connect.P99, cs.SetupSeconds, float64(cs.Opened)
		for _, n := range cs.Failures {
			failed += float64(n)
		}
	}
	success := 0.0
	if opened+failed > 0 {
		success = opened / (opened + failed)
	}
	c.p99, c.setup, c.success = append(c.p99, p99), append(c.setup, setup), append(c.success, success)
}

// connectMetrics are the set-up comparisons: connect p99 (ms) and the
// time until all -c clients were ready (s), lower is better; the share of
// connects that succeeded, higher is better (a count of failures would
// form no ratio when the fix takes it to zero).
type connectMetric struct {
	name         string
	higherBetter bool
	of           func(*connectRuns) []float64
}

var connectMetrics = []connectMetric{
	{"connect_p99_ms", false, func(c *connectRuns) []float64 { return c.p99 }},
	{"setup_s", false, func(c *connectRuns) []float64 { return c.setup }},
	{"connect_success", true, func(c *connectRuns) []float64 { return c.success }},
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
// baseline's with stats.Compare, the one verdict; false when there is no
// ratio to form.
func compare(d stats.Design, workload, variant, baseline, metric string, higherBetter bool, vals, base []float64) (labdata.Comparison, bool) {
	s, ok := stats.Compare(vals, base, higherBetter, d)
	c := labdata.Comparison{Workload: workload, Variant: variant, Baseline: baseline, Metric: metric, HigherIsBetter: higherBetter,
		N: s.N, BaselineN: s.RefN, Median: s.Median, BaselineMedian: s.RefMedian, Ratio: s.Ratio,
		CILow: s.CILow, CIHigh: s.CIHigh, HasCI: s.HasCI, Level: s.Level, Verdict: stats.LabWords.Verdict(s.Outcome)}
	if len(vals) > 0 {
		c.Min, c.Max = slices.Min(vals), slices.Max(vals)
	}
	return c, ok
}
