package placement

import (
	"fmt"

	"redline/internal/host"
)

// LocalCPUs returns the CPUs local to nic that may take its work (online,
// not isolated or nohz_full: irqbalance bans those too), the node they
// are on (-1 when the machine has one node and the NIC does not say), and
// notes for people. nicNode, when set, overrides the NIC's node.
func LocalCPUs(snap *host.Snapshot, nic *host.NIC, nicNode *int) (cpus host.CPUSet, node int, notes []string, err error) {
	online := OnlineCPUs(snap)
	node, known := -1, false
	switch {
	case nicNode != nil:
		node, known = *nicNode, true
	case nic.NUMANode != nil && *nic.NUMANode >= 0:
		node, known = *nic.NUMANode, true
	}
	switch {
	case known:
		cpus = snap.NodeCPUs(node)
		if cpus.IsEmpty() {
			return cpus, node, notes, fmt.Errorf("NUMA node %d has no CPUs on this host", node)
		}
	case len(snap.NUMA.Nodes) > 1:
		return cpus, -1, notes, fmt.Errorf("%s does not report its NUMA node (-1) and this machine has %d nodes: redline will not guess (Intel's set_irq_affinity silently takes node 0); pass --nic-node N", nic.Name, len(snap.NUMA.Nodes))
	default:
		cpus = online
		notes = append(notes, fmt.Sprintf("%s reports NUMA node -1 (unknown); the machine has one node, so every CPU (%s) is local", nic.Name, online.List()))
	}
	cpus = cpus.Intersect(online)
	if banned := bannedCPUs(snap).Intersect(cpus); !banned.IsEmpty() {
		notes = append(notes, fmt.Sprintf("CPUs %s are isolated or nohz_full: left out of IRQ and RPS placement", banned.List()))
		cpus = cpus.Difference(banned)
	}
	if cpus.IsEmpty() {
		return cpus, node, notes, fmt.Errorf("no online, non-isolated CPU is local to %s", nic.Name)
	}
	return cpus, node, notes, nil
}

// OnlineCPUs is the online CPUs of snap.
func OnlineCPUs(snap *host.Snapshot) host.CPUSet {
	if snap.CPU.Online != nil {
		return snap.CPU.Online.Clone()
	}
	var s host.CPUSet
	for _, c := range snap.CPU.CPUs {
		if c.Online {
			s.Add(c.ID)
		}
	}
	return s
}

// IRQCPUs is the CPUs that may take interrupts at all: online, not
// isolated and not nohz_full (irqbalance bans those too: their owners
// asked for no interrupts). Static placement and steer both start here.
func IRQCPUs(snap *host.Snapshot) host.CPUSet {
	return OnlineCPUs(snap).Difference(bannedCPUs(snap))
}

func bannedCPUs(snap *host.Snapshot) host.CPUSet {
	var s host.CPUSet
	for _, set := range []*host.CPUSet{snap.CPU.Isolated, snap.CPU.NohzFull} {
		if set != nil {
			s = s.Union(*set)
		}
	}
	return s
}

// RedisCPUs are the CPUs of Redis's main and io threads: their affinity
// when pinned narrower than the online CPUs, else the CPU each last ran on
// (pinned is then false: the scheduler may move them).
func RedisCPUs(snap *host.Snapshot, p *host.Process) (cpus host.CPUSet, pinned bool) {
	online := OnlineCPUs(snap)
	pinned = true
	for _, t := range p.Threads {
		if t.Role != "main" && t.Role != "io" {
			continue
		}
		allowed := t.CPUsAllowed
		if allowed == nil {
			allowed = p.CPUsAllowed
		}
		switch {
		case allowed != nil && !online.IsSubsetOf(*allowed):
			cpus = cpus.Union(*allowed)
		case t.CPU != nil:
			cpus.Add(*t.CPU)
			pinned = false
		}
	}
	return cpus, pinned
}

// ServersCPUs is the union of RedisCPUs over procs: where the servers'
// main and io threads run now (steer, which looks again every interval).
func ServersCPUs(snap *host.Snapshot, procs []*host.Process) host.CPUSet {
	var cpus host.CPUSet
	for _, p := range procs {
		c, _ := RedisCPUs(snap, p)
		cpus = cpus.Union(c)
	}
	return cpus
}

// ConfiguredCPUs is the CPUs the main and io threads of procs are confined
// to by their affinity (narrower than the online CPUs), and the servers
// with a main or io thread free to run on any CPU. Static placement (IRQs,
// RPS) keeps off these only: where a free thread last ran changes from one
// look to the next, and a fix built on it would too.
func ConfiguredCPUs(snap *host.Snapshot, procs []*host.Process) (cpus host.CPUSet, unpinned []*host.Process) {
	online := OnlineCPUs(snap)
	for _, p := range procs {
		free := false
		for _, t := range p.Threads {
			if t.Role != "main" && t.Role != "io" {
				continue
			}
			allowed := t.CPUsAllowed
			if allowed == nil {
				allowed = p.CPUsAllowed
			}
			if allowed != nil && !online.IsSubsetOf(*allowed) {
				cpus = cpus.Union(*allowed)
			} else {
				free = true
			}
		}
		if free {
			unpinned = append(unpinned, p)
		}
	}
	return cpus, unpinned
}
