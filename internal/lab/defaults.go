package lab

import (
	"fmt"
	"runtime"
	"time"

	"redline/internal/labdata"
)

// DefaultLabBudget is the default lab's time budget, counted from its
// start (target, doctor and all): the lab starts no round it expects to
// end after it.
const DefaultLabBudget = 150 * time.Second

// DefaultScenario is what "redline lab" runs without a file: a
// redis-server in a network namespace of its own (target kind netns, so
// the tuned variant's net.* sysctls stay there; the command falls back to
// loopback where one cannot be made, Options.NetnsFallback), the doctor, a baseline, the doctor's safe fixes
// with the safe tune profiles, and, with two or more CPUs, the server and
// the load generator on separate CPUs; interleaved rounds of 1-second SET
// and GET runs, 8 to 16 of them, until every interval is within 3% or
// DefaultLabBudget is spent. It takes at most about three minutes.
func DefaultScenario() labdata.Scenario {
	yes := true
	s := labdata.Scenario{
		Name:        "default",
		Description: "redis-server started by redline in a network namespace of its own: the baseline as found, the doctor's safe fixes, and (with two CPUs or more) client and server pinned apart",
		Target:      labdata.TargetSpec{Kind: labdata.KindNetns},
		Workloads: []labdata.WorkloadSpec{
			{Name: "set-get", Bench: "-t set,get -c 50 -r 100000 --duration 1s"},
		},
		Variants: []labdata.VariantSpec{
			{Name: "baseline", Baseline: true},
			{Name: "tuned", Tune: &labdata.TuneSpec{Doctor: true, Profiles: []string{"net-sysctl", "redis-config"}}},
		},
		MinRuns: DefaultMinRuns,
		MaxRuns: 16,
		Budget:  DefaultLabBudget,
		Warmup:  500 * time.Millisecond,
		Doctor:  &yes,
	}
	if n := runtime.NumCPU(); n >= 2 {
		client := "1"
		if n > 2 {
			client = fmt.Sprintf("1-%d", n-1)
		}
		// Client and server on separate CPUs: on a small VM the scheduler
		// puts them together in some runs and not in others.
		s.Variants = append(s.Variants, labdata.VariantSpec{
			Name:   "split-cpus",
			Server: &labdata.ServerSpec{CPUs: "0"},
			Client: &labdata.ClientSpec{CPUs: client},
		})
	}
	return s
}
