package rules

import (
	"fmt"
	"sort"
	"strings"

	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/placement"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "nic-irq-node-split", Section: "network", Severity: doctor.High,
		Title:  "A queue's interrupts are delivered to several NUMA nodes, or to the node away from the NIC",
		Why:    "a queue whose interrupts land on another node (or alternate between nodes) moves its packets and their socket buffers across the interconnect; where the NIC's node is unknown, the node Redis is confined to is the one to keep them on",
		Source: "KP 2.7 (queue IRQs on the NIC's node); K-scal (RSS IRQ configuration); W (IRQs spread over all nodes)",
		Reads:  []string{"interrupts", "irq", "nics", "numa", "cpu"},
		Needs:  doctor.NeedHost | doctor.ReadsRedis,
		Proves: []string{"/proc/interrupts * queue IRQs by node"},
		Check:  withInferred(checkIRQNodeSplit),
	})
}

// splitShare is the share of a queue's interrupts a second node must
// take for the queue to count as split.
const splitShare = 0.1

func checkIRQNodeSplit(f *doctor.Facts) doctor.Result {
	if r, missing := noTopology(f); missing {
		return r
	}
	if !f.MultiNode() {
		return doctor.Skip("one NUMA node")
	}
	var evs []doctor.Evidence
	var fired nicFindings
	quiet, unrated := "", ""
	for _, n := range f.TargetNICs() {
		loads, sampled, left := nicLoads(f, n)
		if len(loads) == 0 {
			unrated = noRate(n, left, unrated)
			continue
		}
		ref, refEv, known := referenceNode(f, n)
		var bad []queueLoad
		judged := 0
		for _, l := range loads {
			if l.Total < minIRQs {
				continue
			}
			judged++
			if nodes := nodeShares(f, l); len(nodes) > 1 && nodes[1].share >= splitShare || known && nodes[0].node != ref {
				bad = append(bad, l)
			}
		}
		if judged == 0 {
			quiet = fmt.Sprintf("no queue of %s took %d interrupts (%s)", n.Name, minIRQs, window(sampled, "since boot"))
			continue
		}
		if len(bad) > 0 {
			fired.add(fireNodeSplit(f, n, bad, len(loads), ref, known, append(append([]doctor.Evidence{refEv}, nodeEvs(f, n, bad, sampled)...), leftEv(n, left)...)))
			continue
		}
		evs = append(evs, refEv, doctor.Evidence{Source: fmt.Sprintf("/proc/interrupts %s queue IRQs by node", n.Name), Value: nodeSummary(f, loads), Note: window(sampled, "since boot")})
		evs = append(evs, leftEv(n, left)...)
	}
	if r, ok := fired.result(); ok {
		return r
	}
	switch {
	case len(evs) > 0:
		return doctor.Pass("each queue's interrupts stay on one node, the NIC's (or Redis's)").With(evs...)
	case quiet != "":
		return doctor.Unchecked("too few interrupts to judge: %s", quiet)
	case unrated != "":
		return doctor.Unchecked("%s", unrated)
	}
	return doctor.Skip("no NIC with mapped queue IRQs that /proc/interrupts counts")
}

// referenceNode is the node a NIC's queue interrupts belong on: the NIC's,
// else the node of the CPUs every redis-server's main and io threads are
// confined to (placement.ConfiguredCPUs, the CPUs IRQ placement keeps
// off; each server named in the evidence). Where a thread last ran
// changes between runs and is not used: a server free to run on any CPU,
// or servers confined to CPUs of several nodes, give no one node, and
// only splits are judged (said once, the same on every run).
func referenceNode(f *doctor.Facts, n *host.NIC) (int, doctor.Evidence, bool) {
	if node, ok := nicNode(n); ok {
		return node, nodeEv(n), true
	}
	unknown := fmt.Sprintf("the NIC's node is unknown (%s = %s)", nodeEv(n).Source, nodeEv(n).Value)
	servers := f.RedisProcesses()
	if len(servers) == 0 {
		ev := nodeEv(n)
		ev.Note = "unknown, and no redis-server on this host: only queues split across nodes are judged"
		return -1, ev, false
	}
	cpus, unpinned := placement.ConfiguredCPUs(f.Host, servers)
	ev := doctor.Evidence{Source: fmt.Sprintf("CPUs the main and io threads of redis-server pid %s may run on (/proc/PID/task/TID/status Cpus_allowed_list)", pidsOf(servers)), Value: cpus.List()}
	if cpus.IsEmpty() {
		ev.Value = "any CPU"
	}
	nodes := f.NodesOf(cpus)
	switch {
	case len(unpinned) > 0:
		ev.Note = fmt.Sprintf("%s and redis-server pid %s may run on any CPU: no one node to keep the queues on; only queues split across nodes are judged", unknown, pidsOf(unpinned))
	case len(nodes) == 1:
		ev.Note = fmt.Sprintf("node %d: %s, so the node Redis is confined to is the reference", nodes[0], unknown)
		return nodes[0], ev, true
	default:
		ev.Note = fmt.Sprintf("%s and the servers are confined to CPUs of %d nodes (%s): no one node to keep the queues on; only queues split across nodes are judged", unknown, len(nodes), joinInts(nodes))
	}
	return -1, ev, false
}

// pidsOf is "100, 200".
func pidsOf(procs []*host.Process) string {
	pids := make([]int, len(procs))
	for i, p := range procs {
		pids[i] = p.PID
	}
	sort.Ints(pids)
	return joinInts(pids)
}

// mainThreadOf is a process's main thread.
func mainThreadOf(p *host.Process) *host.Thread {
	for i := range p.Threads {
		if p.Threads[i].TID == p.PID || p.Threads[i].Role == "main" {
			return &p.Threads[i]
		}
	}
	return nil
}

type nodeShare struct {
	node  int
	share float64
}

// nodeShares is a queue's interrupts per node, biggest first.
func nodeShares(f *doctor.Facts, l queueLoad) []nodeShare {
	by := map[int]uint64{}
	for cpu, c := range l.ByCPU {
		if node, ok := f.NodeOf(cpu); ok {
			by[node] += c
		}
	}
	out := make([]nodeShare, 0, len(by))
	for node, c := range by {
		if c > 0 {
			out = append(out, nodeShare{node, float64(c) / float64(l.Total)})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].share != out[b].share {
			return out[a].share > out[b].share
		}
		return out[a].node < out[b].node
	})
	if len(out) == 0 {
		out = append(out, nodeShare{-1, 0})
	}
	return out
}

func nodeText(ns []nodeShare) string {
	parts := make([]string, len(ns))
	for i, s := range ns {
		parts[i] = fmt.Sprintf("node%d %.0f%%", s.node, 100*s.share)
	}
	return strings.Join(parts, ", ")
}

func nodeEvs(f *doctor.Facts, n *host.NIC, loads []queueLoad, sampled bool) []doctor.Evidence {
	var evs []doctor.Evidence
	for _, l := range loads[:min(len(loads), 8)] {
		ev := loadEv(f, n, l, sampled)
		ev.Value = nodeText(nodeShares(f, l)) + " (" + ev.Value + ")"
		evs = append(evs, ev)
	}
	return evs
}

// nodeSummary is the node of every judged queue, "queues 0-7 on node 1".
func nodeSummary(f *doctor.Facts, loads []queueLoad) string {
	by := map[int][]int{}
	for _, l := range loads {
		if l.Total >= minIRQs {
			node := nodeShares(f, l)[0].node
			by[node] = append(by[node], l.Queue)
		}
	}
	var parts []string
	for node, qs := range by {
		parts = append(parts, fmt.Sprintf("node %d: queues %s", node, joinInts(qs)))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

func fireNodeSplit(f *doctor.Facts, n *host.NIC, bad []queueLoad, queues, ref int, known bool, evs []doctor.Evidence) doctor.Result {
	split := 0
	for _, l := range bad {
		if ns := nodeShares(f, l); len(ns) > 1 && ns[1].share >= splitShare {
			split++
		}
	}
	away := len(bad) - split
	what := fmt.Sprintf("%d of %d queues of %s had their interrupts split across nodes", split, queues, n.Name)
	switch {
	case split == 0:
		what = fmt.Sprintf("%d of %d queues of %s had their interrupts delivered to a node other than node %d", away, queues, n.Name, ref)
	case away > 0:
		what += fmt.Sprintf(", and %d delivered to a node other than node %d", away, ref)
	}
	fix := nodeSplitFix(f, n, ref, known)
	return doctor.Fire("%s", what).With(evs...).WithFix(fix).
		Note("since-boot counts include deliveries before the last affinity change; --sample 5s shows where they go now")
}

// nodeSplitFix pins the queues where placement puts them, on the
// reference node when the NIC's own is unknown.
func nodeSplitFix(f *doctor.Facts, n *host.NIC, ref int, known bool) *doctor.Fix {
	var override *int
	if _, ok := nicNode(n); !ok && known {
		override = &ref
	}
	fix := irqPlacementFix(f, n, override)
	fix.Advice = append(fix.Advice, "stop irqbalance first or it moves them back (see irqbalance-pinning)")
	return fix
}
