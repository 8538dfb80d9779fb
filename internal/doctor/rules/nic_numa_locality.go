package rules

import (
	"fmt"

	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "nic-numa-locality", Section: "network", Severity: doctor.High,
		Title:  "The server runs on a NUMA node other than its NIC's",
		Why:    "packets arrive in the NIC's node's memory; a server whose threads or pages sit on another node pays a remote access for every request",
		Source: "KP (masters on the NIC node's CPUs); NV (CPU and memory in the NIC's NUMA domain); W (moving the containers to NIC node 1 helped)",
		Reads:  []string{"nics", "numa", "proc/PID/numa_maps"},
		Needs:  doctor.NeedHost | doctor.NeedRedisProcess,
		Proves: []string{"*/numa_node", "/proc/*/status Cpus_allowed_list|cgroup * cpuset.cpus.effective"},
		Check:  checkNICLocality,
	})
}

func checkNICLocality(f *doctor.Facts) doctor.Result {
	if r, missing := noTopology(f); missing {
		return r
	}
	if !f.MultiNode() {
		return doctor.Skip("one NUMA node")
	}
	for _, n := range f.TargetNICs() {
		node, ok := nicNode(n)
		local, ok2 := nicNodeCPUs(f, n)
		if !ok || !ok2 {
			continue
		}
		return localityOf(f, n, node, local)
	}
	return doctor.Skip("no NIC with a known NUMA node (numa_node -1 or absent)")
}

func localityOf(f *doctor.Facts, n *host.NIC, node int, local host.CPUSet) doctor.Result {
	p := f.RedisProcess()
	allowed, evs := f.AllowedCPUs()
	evs = append([]doctor.Evidence{nodeEv(n)}, evs...)
	var problems []string
	if !allowed.IsSubsetOf(local) {
		problems = append(problems, fmt.Sprintf("may run on CPUs %s (nodes %s)", allowed.List(), joinInts(f.NodesOf(allowed))))
	}
	for _, t := range p.Threads {
		if t.Node != nil && *t.Node != node && (t.Role == "main" || t.Role == "io") {
			evs = append(evs, doctor.Ev(fmt.Sprintf("/proc/%d/task/%d/stat (%s) last CPU", p.PID, t.TID, t.Comm), fmt.Sprintf("%d (node %d)", *t.CPU, *t.Node)))
			problems = append(problems, fmt.Sprintf("%s thread last ran on node %d", t.Role, *t.Node))
		}
	}
	if far, total := remotePages(p, node); total > 0 && far*2 > total {
		evs = append(evs, doctor.Ev(fmt.Sprintf("/proc/%d/numa_maps", p.PID), fmt.Sprintf("%s of %s off node %d", doctor.Bytes(far), doctor.Bytes(total), node)))
		problems = append(problems, "most of its memory is on other nodes")
	}
	if len(problems) == 0 {
		return doctor.Pass("the server runs on %s's node %d", n.Name, node).With(evs...)
	}
	fix := new(doctor.Fix)
	old := ""
	if p.CPUsAllowed != nil {
		old = p.CPUsAllowed.List()
	}
	fix.Affinity(p.PID, p.Comm, local.List(), old, fmt.Sprintf("run redis-server on %s's node %d", n.Name, node))
	fix.Advice = []string{fmt.Sprintf("memory already allocated stays where it is: restart the server under numactl --cpunodebind=%d --membind=%d (or set the container's cpuset.cpus/cpuset.mems) to move it", node, node)}
	return doctor.Fire("%s is on node %d but the server %s", n.Name, node, joinText(problems)).With(evs...).WithFix(fix)
}

// remotePages returns the bytes of p's memory off node, and the total.
func remotePages(p *host.Process, node int) (far, total uint64) {
	for nd, b := range p.NUMABytes {
		total += b
		if nd != node {
			far += b
		}
	}
	return far, total
}

func joinText(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	out := xs[0]
	for _, x := range xs[1 : len(xs)-1] {
		out += ", " + x
	}
	return out + " and " + xs[len(xs)-1]
}
