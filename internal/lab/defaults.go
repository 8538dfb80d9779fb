package lab

import (
	"fmt"
	"runtime"
	"time"

	"redline/internal/labdata"
)

// DefaultScenario is what "redline lab" runs without a file: a managed
// redis-server on loopback, the doctor, a baseline, the doctor's safe fixes
// with the safe tune profiles, and, with two or more CPUs, the server and
// the load generator on separate CPUs; five interleaved repetitions of SET
// and GET. It takes about two minutes on a 2-CPU machine.
func DefaultScenario() labdata.Scenario {
	yes := true
	s := labdata.Scenario{
		Name:        "default",
		Description: "redis-server started by redline on loopback: baseline, the doctor's safe fixes, and CPU placement",
		Target:      labdata.TargetSpec{Kind: "managed"},
		Workloads: []labdata.WorkloadSpec{
			{Name: "set-get", Bench: "-t set,get -c 50 -r 100000 --duration 2s"},
		},
		Variants: []labdata.VariantSpec{
			{Name: "baseline", Baseline: true},
			{Name: "tuned", Tune: &labdata.TuneSpec{Doctor: true, Profiles: []string{"net-sysctl", "redis-config"}}},
		},
		Repetitions: DefaultRepetitions,
		Warmup:      500 * time.Millisecond,
		Doctor:      &yes,
	}
	if n := runtime.NumCPU(); n >= 2 {
		client := "1"
		if n > 2 {
			client = fmt.Sprintf("1-%d", n-1)
		}
		s.Variants = append(s.Variants, labdata.VariantSpec{
			Name:   "split-cpus",
			Server: &labdata.ServerSpec{CPUs: "0"},
			Client: &labdata.ClientSpec{CPUs: client},
		})
	}
	return s
}
