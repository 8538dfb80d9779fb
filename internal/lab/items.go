package lab

import (
	"fmt"

	"redline/internal/bench/cmdline"
	"redline/internal/labdata"
)

// expand turns the workloads into items: one per test of each workload,
// aimed at the target.
func expand(s labdata.Scenario, tg *target, cpus []int) ([]item, error) {
	var items []item
	h, p := hostPort(tg.addr)
	for _, w := range s.Workloads {
		wl, err := cmdline.ParseWorkload(w.Bench)
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
			items = append(items, item{name: name, opts: o, test: t})
		}
	}
	return items, nil
}

// planned counts the runs the scenario asks for: every test of every
// workload (the items), under every variant, Repetitions times.
func planned(s labdata.Scenario, items []item) *labdata.PlannedRuns {
	p := &labdata.PlannedRuns{Total: s.Repetitions * len(s.Variants) * len(items)}
	for _, v := range s.Variants {
		for _, it := range items {
			p.Groups = append(p.Groups, labdata.PlannedGroup{Variant: v.Name, Workload: it.name, Runs: s.Repetitions})
		}
	}
	return p
}
