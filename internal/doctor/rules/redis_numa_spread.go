package rules

import (
	"fmt"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "redis-numa-spread", Section: "numa-cpu", Severity: doctor.Medium,
		Title:  "The server may run on several NUMA nodes",
		Why:    "unpinned, the scheduler moves the main thread between nodes while its memory stays where it was first touched: some requests pay remote memory latency",
		Source: "KP (numactl --cpunodebind --membind); W (containers bound to one node)",
		Needs:  doctor.NeedHost | doctor.NeedRedisProcess,
		Proves: []string{"/proc/*/status Cpus_allowed_list|cgroup * cpuset.cpus.effective"},
		Check:  checkNUMASpread,
	})
}

func checkNUMASpread(f *doctor.Facts) doctor.Result {
	if r, missing := noTopology(f); missing {
		return r
	}
	if !f.MultiNode() {
		return doctor.Skip("one NUMA node")
	}
	cpus, evs := f.AllowedCPUs()
	nodes := f.NodesOf(cpus)
	if len(nodes) <= 1 {
		return doctor.Pass("the server is confined to node %s", joinInts(nodes)).With(evs...)
	}
	p := f.RedisProcess()
	node := nodes[0]
	if t := f.MainThread(); t != nil && t.Node != nil {
		node = *t.Node
	}
	for _, n := range f.TargetNICs() { // prefer the NIC's node
		if nn, ok := nicNode(n); ok {
			node = nn
			break
		}
	}
	target, _ := f.NodeCPUs(node)
	fix := new(doctor.Fix).Affinity(p.PID, p.Comm, target.List(), p.CPUsAllowed.List(), fmt.Sprintf("keep the server on node %d", node))
	fix.Advice = []string{fmt.Sprintf("memory placement needs a restart: numactl --cpunodebind=%d --membind=%d redis-server ...", node, node)}
	return doctor.Fire("the server may run on CPUs %s, which span nodes %s", cpus.List(), joinInts(nodes)).With(evs...).WithFix(fix)
}
