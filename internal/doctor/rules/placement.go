package rules

import (
	"fmt"

	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/placement"
)

// placeIRQs is where n's queue IRQs go: placement.IRQs, the answer tune's
// irq-local profile gives on the same snapshot.
func placeIRQs(f *doctor.Facts, n *host.NIC) (*placement.IRQPlacement, error) {
	return placeIRQsOn(f, n, nil)
}

// placeIRQsOn is placeIRQs with the NIC's node given (nil: the NIC's own),
// for a NIC whose firmware does not say. The IRQs keep off every
// redis-server's CPUs (the one chosen with --pid, else all of them), also
// when a rule judges the servers one at a time: a fix that moved IRQs onto
// another server's CPUs would trade one finding for another.
func placeIRQsOn(f *doctor.Facts, n *host.NIC, node *int) (*placement.IRQPlacement, error) {
	return placement.IRQs(placementInput(f, n, node))
}

// placementInput is what the queue IRQ fixes place from, and the xps fix
// maps TX queues by.
func placementInput(f *doctor.Facts, n *host.NIC, node *int) placement.Input {
	return placement.Input{Host: f.Host, NIC: n, NICNode: node, Redis: f.RedisProcesses()}
}

// offNodeIRQs returns the queue IRQs of n that are delivered outside the
// NIC's local CPUs, with the local CPUs. ok is false when the rule does
// not apply (one node, unknown NIC node).
func offNodeIRQs(f *doctor.Facts, n *host.NIC) (off []*host.IRQ, local host.CPUSet, ok bool) {
	if !f.MultiNode() {
		return nil, local, false
	}
	if _, known := nicNode(n); !known {
		return nil, local, false
	}
	local, ok = nicNodeCPUs(f, n)
	if !ok {
		return nil, local, false
	}
	for _, q := range n.QueueIRQs {
		irq := f.IRQ(q.IRQ)
		if cpus, _, ok := irqCPUs(irq); ok && !cpus.IsSubsetOf(local) {
			off = append(off, irq)
		}
	}
	return off, local, true
}

// mainCPUs is where the server's main thread may run, by configured
// affinity: its own (server_cpulist) when set, else the process's narrowed
// by its cgroup's cpuset.
func mainCPUs(f *doctor.Facts) (host.CPUSet, []doctor.Evidence, bool) {
	t := f.MainThread()
	if t == nil {
		return host.CPUSet{}, nil, false
	}
	if t.CPUsAllowed != nil {
		p := f.RedisProcess()
		return *t.CPUsAllowed, []doctor.Evidence{doctor.Ev(fmt.Sprintf("/proc/%d/task/%d/status Cpus_allowed_list", p.PID, t.TID), t.CPUsAllowed.List())}, true
	}
	cpus, evs := f.AllowedCPUs()
	return cpus, evs, !cpus.IsEmpty()
}

// overlapIRQs returns the queue IRQs whose configured affinity
// (smp_affinity_list) lies within the CPUs the main thread may run on,
// when the main thread is confined to fewer than all CPUs.
func overlapIRQs(f *doctor.Facts, n *host.NIC) []*host.IRQ {
	main, _, ok := mainCPUs(f)
	if online := f.OnlineCPUs(); !ok || !online.IsEmpty() && online.IsSubsetOf(main) {
		return nil
	}
	var out []*host.IRQ
	for _, q := range n.QueueIRQs {
		irq := f.IRQ(q.IRQ)
		if irq != nil && irq.Affinity != nil && !irq.Affinity.IsEmpty() && irq.Affinity.IsSubsetOf(main) {
			out = append(out, irq)
		}
	}
	return out
}
