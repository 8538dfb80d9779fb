package lab

import (
	"fmt"
	"math/rand/v2"
	"time"

	"redline/internal/labdata"
	"redline/internal/stats"
)

// The sequential design's defaults for a scenario that fixes no
// repetitions: at least DefaultMinRuns rounds (enough for the default lab's
// 8 comparisons to claim something at 3 looks), at most DefaultMaxRuns,
// until every interval is narrower than DefaultPrecision or DefaultBudget
// is spent.
const (
	DefaultMinRuns   = 8
	DefaultMaxRuns   = 30
	DefaultPrecision = 0.03
	DefaultBudget    = 10 * time.Minute
)

// design resolves the scenario's run settings into the lab's sequential
// design for items tests: a scenario with Repetitions runs exactly that
// many rounds and looks once.
// connectTests of the tests compare connection set-up too
// (WorkloadSpec.Connect): ConnectMetrics more comparisons each.
func design(s labdata.Scenario, tests, connectTests int) *labdata.Sequential {
	q := &labdata.Sequential{MinRuns: s.MinRuns, MaxRuns: s.MaxRuns, Precision: float64(s.Precision), Budget: s.Budget, Alpha: float64(s.Alpha)}
	if s.Repetitions > 0 && s.MinRuns == 0 && s.MaxRuns == 0 {
		q.MinRuns, q.MaxRuns = s.Repetitions, s.Repetitions
	}
	if q.MinRuns == 0 {
		q.MinRuns = min(DefaultMinRuns, max(q.MaxRuns, 1))
	}
	if q.MaxRuns == 0 {
		q.MaxRuns = max(DefaultMaxRuns, q.MinRuns)
	}
	if q.Precision == 0 {
		q.Precision = DefaultPrecision
	}
	if q.Budget == 0 && q.MinRuns != q.MaxRuns {
		q.Budget = DefaultBudget
	}
	if q.Alpha == 0 {
		q.Alpha = stats.DefaultAlpha
	}
	q.Comparisons = (tests*stats.MetricsPerComparison + connectTests*ConnectMetrics) * max(len(s.Variants)-1, 0)
	q.Seed = newSeed()
	// Rounds are blocks: a round's runs share what the machine was doing
	// then, and comparing them round by round cancels it. A paired
	// comparison needs more rounds before it can claim anything (every
	// pair on one side is 2^-n), so a lab too short for that compares the
	// runs as two groups instead; the choice is made here, before any run.
	looks(q, true)
	if q.RunsNeeded > q.MaxRuns {
		looks(q, false)
	}
	return q
}

// looks sets q's looks, level and runs needed for a paired design or not.
// A look before the runs can make a claim is wasted (and costs part of the
// error budget), so the first look is at the runs needed, which depend on
// how many looks there are: fewer looks, a larger level, maybe fewer runs.
func looks(q *labdata.Sequential, paired bool) {
	q.Paired = paired
	first := q.MinRuns
	for {
		q.Looks = stats.LookSchedule(first, q.MaxRuns)
		d := statsDesign(q)
		q.Level, q.RunsNeeded = d.Level(), d.RunsNeeded()
		if q.RunsNeeded <= first || first >= q.MaxRuns {
			return
		}
		first = min(q.RunsNeeded, q.MaxRuns)
	}
}

func statsDesign(q *labdata.Sequential) stats.Design {
	if q == nil {
		return stats.Design{Alpha: stats.DefaultAlpha, Comparisons: 1, Looks: 1}
	}
	return stats.Design{Alpha: q.Alpha, Comparisons: q.Comparisons, Looks: len(q.Looks), Paired: q.Paired}
}

// describePlan is the plan as the progress display states it.
func describePlan(q *labdata.Sequential, perRound int) string {
	if q.MinRuns == q.MaxRuns {
		return fmt.Sprintf("plan: %d rounds of %d runs; %d comparisons at a %.0f%% per-lab false-positive rate (each interval at %.2f%%), a claim needs %d runs a side",
			q.MaxRuns, perRound, q.Comparisons, 100*q.Alpha, 100*(1-q.Level), q.RunsNeeded)
	}
	return fmt.Sprintf("plan: %d to %d rounds of %d runs, until every interval is narrower than %.1f%% or %s is spent (looks at %s runs); %d comparisons at a %.0f%% per-lab false-positive rate, a claim needs %d runs a side",
		q.MinRuns, q.MaxRuns, perRound, 100*q.Precision, q.Budget, q.LooksText(), q.Comparisons, 100*q.Alpha, q.RunsNeeded)
}

// isLook reports whether the lab examines its runs after round r.
func isLook(q *labdata.Sequential, r int) bool {
	for _, n := range q.Looks {
		if n == r {
			return true
		}
	}
	return false
}

// precise reports whether every comparison of throughput and p99 has an
// interval narrower than the target (the spread's ratio is a ratio of
// small differences: it is never that narrow, and does not hold the lab).
func precise(cs []labdata.Comparison, precision float64) bool {
	for _, c := range cs {
		_, connect := labdata.ConnectMetric(c.Metric)
		if c.Metric == labdata.MetricSpread.Key || connect {
			continue // set-up figures swing by whole SYN retransmits: they do not hold the lab
		}
		if !c.HasCI || c.CIHigh-c.CILow >= precision {
			return false
		}
	}
	return len(cs) > 0
}

// reason says why a comparison makes no claim, for the report and the
// terminal: the runs were too few for any interval at the lab's level, or
// the interval still includes 1 (narrow: the change is smaller than the
// precision; wide: the machine was too noisy for the runs the lab could
// take, and why it took no more).
func reason(c labdata.Comparison, q *labdata.Sequential) string {
	if q == nil || stats.Claims(c.Verdict) {
		return ""
	}
	stop := ""
	if q.Stopped != "" && q.Stopped != labdata.StopPrecise {
		stop = "; stopped: " + q.Stopped
		if q.Stopped == labdata.StopBudget {
			stop += " (" + q.Budget.String() + ")"
		}
	}
	if !c.HasCI && c.Metric == labdata.MetricSpread.Key {
		// The spread is compared as two groups even in a paired lab.
		d := statsDesign(q)
		d.Paired = false
		need := d.RunsNeeded()
		return fmt.Sprintf("%d and %d pairs of runs: a claim on the spread at this lab's error rate needs %d pairs (%d runs) a side%s", c.N, c.BaselineN, need, 2*need, stop)
	}
	if !c.HasCI && c.Paired {
		return fmt.Sprintf("%d rounds with both: a claim at this lab's error rate needs %d%s", c.N, q.RunsNeeded, stop)
	}
	if !c.HasCI {
		return fmt.Sprintf("%d and %d runs: a claim at this lab's error rate needs %d a side%s", c.N, c.BaselineN, q.RunsNeeded, stop)
	}
	w := c.CIHigh - c.CILow
	if c.Metric == labdata.MetricSpread.Key {
		return fmt.Sprintf("the spread's interval [%.2f, %.2f] includes 1 after %d pairs of runs%s", c.CILow, c.CIHigh, min(c.N, c.BaselineN), stop)
	}
	if w < q.Precision {
		return fmt.Sprintf("any change is within %+.1f%%..%+.1f%%, inside the %.0f%% precision", 100*(c.CILow-1), 100*(c.CIHigh-1), 100*q.Precision)
	}
	if c.Paired {
		return fmt.Sprintf("interval %.0f%% wide after %d rounds, wider than the %.0f%% precision: the runs vary too much within a round%s", 100*w, c.N, 100*q.Precision, stop)
	}
	return fmt.Sprintf("interval %.0f%% wide after %d runs, wider than the %.0f%% precision: the runs vary too much%s", 100*w, min(c.N, c.BaselineN), 100*q.Precision, stop)
}

// newSeed draws a lab's seed (the order of its variants in every round);
// tests whose fake runs depend on the order fix it.
var newSeed = rand.Uint64
