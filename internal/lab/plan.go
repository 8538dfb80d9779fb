package lab

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"

	"redline/internal/bench/cmdline"
	"redline/internal/host"
)

// expand turns the workloads into items: one per test of each workload,
// aimed at the target.
func expand(s Scenario, tg *target, cpus []int) ([]item, error) {
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

// mergeServer applies a variant's server overrides to the scenario's.
func mergeServer(base ServerSpec, v *ServerSpec) ServerSpec {
	out := base
	out.Config = append([]string(nil), base.Config...)
	if v == nil {
		return out
	}
	if v.Binary != "" {
		out.Binary = v.Binary
	}
	if v.Allocator != "" {
		out.Allocator = v.Allocator
	}
	out.Config = append(out.Config, v.Config...)
	if len(v.Env) > 0 {
		out.Env = map[string]string{}
		for k, val := range base.Env {
			out.Env[k] = val
		}
		for k, val := range v.Env {
			out.Env[k] = val
		}
	}
	if v.CPUs != "" {
		out.CPUs = v.CPUs
	}
	if v.NUMANode != nil {
		out.NUMANode = v.NUMANode
	}
	return out
}

// serverDiff lists a variant's server overrides for the report.
func serverDiff(v VariantSpec) []string {
	var d []string
	if v.Server != nil {
		if v.Server.Binary != "" {
			d = append(d, "binary "+v.Server.Binary)
		}
		if v.Server.Allocator != "" {
			d = append(d, "allocator "+v.Server.Allocator)
		}
		for _, c := range v.Server.Config {
			d = append(d, "config "+c)
		}
		keys := make([]string, 0, len(v.Server.Env))
		for k := range v.Server.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			d = append(d, "env "+k+"="+v.Server.Env[k])
		}
		if v.Server.CPUs != "" {
			d = append(d, "server CPUs "+v.Server.CPUs)
		}
		if v.Server.NUMANode != nil {
			d = append(d, fmt.Sprintf("server NUMA node %d", *v.Server.NUMANode))
		}
	}
	if v.Client != nil && v.Client.CPUs != "" {
		d = append(d, "client CPUs "+v.Client.CPUs)
	}
	return d
}

func describe(v VariantSpec) string {
	var parts []string
	if v.Baseline {
		parts = append(parts, "baseline: the host and server as found")
	}
	if t := v.Tune; t != nil {
		if len(t.Profiles) > 0 {
			parts = append(parts, "tune profiles "+strings.Join(t.Profiles, ", "))
		}
		if t.Plan != "" {
			parts = append(parts, "plan "+t.Plan)
		}
		if t.Doctor {
			parts = append(parts, "the doctor's safe fixes")
		}
	}
	if d := serverDiff(v); len(d) > 0 {
		parts = append(parts, strings.Join(d, "; "))
	}
	return strings.Join(parts, "; ")
}

// comparisons compares every variant with the baseline, per workload, on
// throughput and p99 latency, over the runs that completed.
func comparisons(r *Result, s Scenario) []Comparison {
	base := ""
	for _, v := range s.Variants {
		if v.Baseline {
			base = v.Name
		}
	}
	type key struct{ w, v string }
	rps, p99 := map[key][]float64{}, map[key][]float64{}
	var workloads []string
	for _, run := range r.Runs {
		sum := run.Summary
		if sum == nil || sum.Interrupted || sum.Error != "" || sum.Requests == 0 {
			continue
		}
		k := key{run.Workload, run.Variant}
		if !slices.Contains(workloads, run.Workload) {
			workloads = append(workloads, run.Workload)
		}
		rps[k] = append(rps[k], sum.RPS)
		p99[k] = append(p99[k], sum.Latency.P99)
	}
	var out []Comparison
	for _, w := range workloads {
		for _, v := range s.Variants {
			if v.Baseline || len(rps[key{w, v.Name}]) == 0 || len(rps[key{w, base}]) == 0 {
				continue
			}
			out = append(out,
				compare(w, v.Name, base, "rps", true, rps[key{w, v.Name}], rps[key{w, base}]),
				compare(w, v.Name, base, "p99_ms", false, p99[key{w, v.Name}], p99[key{w, base}]))
		}
	}
	return out
}

// hostFacts reads the short description of this machine.
func hostFacts() HostFacts {
	h := HostFacts{Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	h.Hostname, _ = os.Hostname()
	fs, err := host.NewFS("/")
	var snap *host.Snapshot
	if err == nil {
		snap, err = host.Read(fs, host.Options{NoProcesses: true})
	}
	if err != nil || snap == nil {
		h.Notes = append(h.Notes, fmt.Sprintf("host facts incomplete: %v", err))
		return h
	}
	h.Kernel = snap.Kernel.Release
	if snap.Kernel.Arch != "" {
		h.Arch = snap.Kernel.Arch
	}
	h.CPUModel = snap.CPU.ModelName
	h.NUMANodes = max(len(snap.NUMA.Nodes), 1)
	if snap.Memory.MemTotal != nil {
		h.MemoryMiB = int64(*snap.Memory.MemTotal / (1 << 20))
	}
	if v := snap.Virtualization; v != nil && v.Hypervisor {
		h.Virtual = strings.TrimSpace(v.Vendor + " " + v.Product)
		if h.Virtual == "" {
			h.Virtual = "hypervisor"
		}
	}
	for _, n := range snap.NICs {
		if !n.Virtual {
			h.NICs = append(h.NICs, nicLine(n))
		}
	}
	return h
}

func nicLine(n host.NIC) string {
	node := "unknown"
	if n.NUMANode != nil {
		node = fmt.Sprint(*n.NUMANode)
	}
	return fmt.Sprintf("%s %s node %s queues %d", n.Name, n.Driver, node, len(n.RxQueues))
}
