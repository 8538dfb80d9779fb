package lab

import (
	"fmt"
	"strings"

	"redline/internal/bench"
	"redline/internal/labdata"
)

// expand turns the workloads into items: one per test of each workload,
// aimed at the target.
func expand(s labdata.Scenario, tg *target, cpus []int) ([]item, error) {
	var items []item
	h, p := hostPort(tg.addr)
	for _, w := range s.Workloads {
		wl, err := bench.ParseWorkload(w.Bench)
		if err != nil {
			return nil, fmt.Errorf("workload %s: %w", w.Name, err)
		}
		o := wl.Options
		// The scenario's target replaces whatever host the line names: the
		// write-ups' lines carry their own -h.
		o.Network, o.Addr, o.NetNS, o.TLS = "tcp", fmt.Sprintf("%s:%d", h, p), tg.clientNS(), nil
		if s.Target.Password != "" {
			o.User, o.Password = s.Target.User, s.Target.Password
		}
		if o.Warmup == 0 {
			o.Warmup = s.Warmup
		}
		o.CPUs, o.Progress = cpus, nil
		for _, t := range wl.Tests {
			name := w.Name
			if len(wl.Tests) > 1 {
				name += "/" + t.Title
			}
			items = append(items, item{name: name, opts: o, test: t, line: loadLine(w.Bench)})
		}
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
	p := &labdata.PlannedRuns{Total: q.MaxRuns * per, MinTotal: q.MinRuns * per}
	for _, v := range s.Variants {
		for _, it := range items {
			p.Groups = append(p.Groups, labdata.PlannedGroup{Variant: v.Name, Workload: it.name, Runs: q.MaxRuns})
		}
	}
	return p
}
