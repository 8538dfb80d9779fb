package lab

import (
	"fmt"
	"strings"

	"redline/internal/bench/cmdline"
	"redline/internal/labdata"
)

// expand turns the workloads into items: one per test of each workload,
// aimed at the target.
func expand(s labdata.Scenario, tg *target, cpus []int) ([]item, error) {
	var items []item
	seen := map[string]string{}
	for _, w := range s.Workloads {
		for _, pt := range sweepPoints(w) {
			its, err := expandOne(s, tg, cpus, w, pt)
			if err != nil {
				return nil, err
			}
			// Runs pair and compare by item name: two items of one name
			// would be measured as one.
			for _, it := range its {
				if first, ok := seen[it.name]; ok {
					return nil, fmt.Errorf("workload %s: a second item named %q (the first from workload %s): give the workloads names no test title repeats, and each workload a test once", w.Name, it.name, first)
				}
				seen[it.name] = w.Name
			}
			items = append(items, its...)
		}
	}
	return items, nil
}

// sweepPoints lists a workload's sweep values in the scenario's order, or
// one nil point for a workload without a sweep.
func sweepPoints(w labdata.WorkloadSpec) []*labdata.SweepPoint {
	for param, values := range w.Sweep { // validated: exactly one parameter
		pts := make([]*labdata.SweepPoint, len(values))
		for i, v := range values {
			pts[i] = &labdata.SweepPoint{Workload: w.Name, Param: param, Value: v}
		}
		return pts
	}
	return []*labdata.SweepPoint{nil}
}

// sweepLine is the workload's line at a sweep point: the parameter's flag
// appended, so it overrides the line's own.
func sweepLine(w labdata.WorkloadSpec, pt *labdata.SweepPoint) (line, name string) {
	if pt == nil {
		return w.Bench, w.Name
	}
	return w.Bench + " " + labdata.SweepParams[pt.Param] + " " + pt.Value, fmt.Sprintf("%s[%s=%s]", w.Name, pt.Param, pt.Value)
}

func expandOne(s labdata.Scenario, tg *target, cpus []int, w labdata.WorkloadSpec, pt *labdata.SweepPoint) ([]item, error) {
	line, base := sweepLine(w, pt)
	wl, err := cmdline.ParseWorkload(line)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", base, err)
	}
	h, p := hostPort(tg.addr)
	o := wl.Options
	// The scenario's target replaces whatever host the line names: the
	// write-ups' lines carry their own -h.
	o.Network, o.Addr, o.NetNS, o.TLS = "tcp", fmt.Sprintf("%s:%d", h, p), tg.clientNS(), nil
	o.ServerNetNS = tg.serverNS() // the listen queue's counters are read there
	if tg.host != nil {
		o.ServerProc = tg.proc // or on the server host, through its session
	}
	if s.Target.Password != "" {
		o.User, o.Password = s.Target.User, s.Target.Password
	}
	if o.Warmup == 0 {
		o.Warmup = s.Warmup
	}
	o.CPUs, o.Progress = cpus, nil
	var items []item
	for _, t := range wl.Tests {
		name := base
		if len(wl.Tests) > 1 {
			name += "/" + t.Title
		}
		items = append(items, item{name: name, opts: o, test: t, line: loadLine(line), sweep: pt})
	}
	return items, nil
}

// loadLine is a workload's line as redline bench runs it, for the runs'
// provenance (the lab aims it at its target whatever -h and -p say).
func loadLine(bench string) []string {
	f := strings.Fields(bench)
	switch {
	case len(f) > 0 && f[0] == "redis-benchmark":
		f = f[1:]
	case len(f) > 1 && f[0] == "redline" && f[1] == "bench":
		f = f[2:]
	}
	return append([]string{"redline", "bench"}, f...)
}

// planned counts the runs the design allows: every test of every workload
// (the items), under every variant, MaxRuns times at most and MinRuns at
// least.
func planned(q *labdata.Sequential, s labdata.Scenario, items []item) *labdata.PlannedRuns {
	per := len(s.Variants) * len(items)
	// The fewest rounds is the first look: the lab cannot stop before it.
	p := &labdata.PlannedRuns{Total: q.MaxRuns * per, MinTotal: max(q.MinRuns, q.Looks[0]) * per}
	for _, v := range s.Variants {
		for _, it := range items {
			p.Groups = append(p.Groups, labdata.PlannedGroup{Variant: v.Name, Workload: it.name, Runs: q.MaxRuns})
		}
	}
	return p
}
