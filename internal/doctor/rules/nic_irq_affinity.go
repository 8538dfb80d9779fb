package rules

import (
	"fmt"

	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "nic-irq-affinity", Section: "network", Severity: doctor.High,
		Title:  "NIC queue interrupts are handled on another NUMA node",
		Why:    "a queue IRQ served off the NIC's node moves every packet across the interconnect; bind each queue IRQ to one core of the NIC's node",
		Source: "KP 2.7 (one core per queue IRQ on the NIC node); K-scal (RSS IRQ configuration); W (IRQs spread over all nodes, NIC on node 1)",
		Reads:  []string{"interrupts", "irq", "nics", "numa"},
		Needs:  doctor.NeedHost,
		Proves: []string{"*/numa_node", "/proc/irq/*affinity_list"},
		Check:  withInferred(checkNICIRQAffinity),
	})
}

func checkNICIRQAffinity(f *doctor.Facts) doctor.Result {
	nics := f.TargetNICs()
	if r, missing := noTopology(f); missing {
		return r
	}
	if !f.MultiNode() {
		return doctor.Skip("one NUMA node: every CPU is local to the NIC")
	}
	checked := 0
	var evs []doctor.Evidence
	for _, n := range nics {
		off, local, ok := offNodeIRQs(f, n)
		if !ok || len(n.QueueIRQs) == 0 {
			continue
		}
		checked++
		if len(off) > 0 {
			return fireIRQAffinity(f, n, off, local)
		}
		evs = append(evs, nodeEv(n), doctor.Ev(fmt.Sprintf("/proc/irq/{%s}/smp_affinity_list", queueIRQList(n)), affinityUnion(f, n).List()))
	}
	if checked == 0 {
		return doctor.Skip("no NIC with a known NUMA node and mapped queue IRQs")
	}
	return doctor.Pass("queue IRQs of %d NIC(s) are on their NIC's node", checked).With(evs...)
}

func fireIRQAffinity(f *doctor.Facts, n *host.NIC, off []*host.IRQ, local host.CPUSet) doctor.Result {
	node, _ := nicNode(n)
	evs := []doctor.Evidence{nodeEv(n), doctor.Ev("/sys/class/net/"+n.Name+"/device/local_cpulist", local.List())}
	nodes := map[int]bool{}
	for _, irq := range off {
		cpus, src, _ := irqCPUs(irq)
		evs = append(evs, doctor.Ev(src, cpus.List()))
		for _, nd := range f.NodesOf(cpus) {
			nodes[nd] = true
		}
	}
	fix := irqPlacementFix(f, n, nil)
	fix.Advice = append(fix.Advice, "stop irqbalance first or it moves them back within 10 s (see irqbalance-pinning)",
		"IRQ affinity is lost on reboot and on driver reload: re-apply with redline tune apply at boot")
	return doctor.Fire("%d of %d queue IRQs of %s (node %d) are handled on node(s) %s", len(off), len(n.QueueIRQs), n.Name, node, keys(nodes)).
		With(evs...).WithFix(fix)
}

// irqPlacementFix pins every queue IRQ of n where placement puts it (on
// node when given: a NIC whose firmware does not say), with placement's
// notes on what it assumed or could not do, as tune's plan prints them;
// when placement cannot, the fix says why instead.
func irqPlacementFix(f *doctor.Facts, n *host.NIC, node *int) *doctor.Fix {
	fix := new(doctor.Fix)
	if why := f.TopologyMissing(); why != "" {
		fix.Advice = []string{"no placement to propose: " + why}
		return fix
	}
	pl, err := placeIRQsOn(f, n, node)
	if err != nil {
		fix.Advice = []string{"no placement to propose: " + err.Error()}
		return fix
	}
	fix.Advice = append(fix.Advice, pl.Notes...)
	for _, q := range pl.Queues {
		for _, qi := range q.IRQs {
			fix.IRQ(qi.IRQ, q.CPU, affinityList(f.IRQ(qi.IRQ)),
				fmt.Sprintf("%s queue %d on node %d", n.Name, q.Queue, pl.Node))
		}
	}
	return fix
}

func keys(m map[int]bool) string {
	var xs []int
	for k := range m {
		xs = append(xs, k)
	}
	sortInts(xs)
	return joinInts(xs)
}
