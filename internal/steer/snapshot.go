package steer

import "redline/internal/host"

// TopologyOf returns the online CPUs of a snapshot with their nodes and
// cores.
func TopologyOf(s *host.Snapshot) Topology {
	var t Topology
	for _, c := range s.CPU.CPUs {
		if !c.Online {
			continue
		}
		tc := TopoCPU{ID: c.ID, Core: c.ID}
		if c.Node != nil {
			tc.Node = *c.Node
		}
		if c.Siblings != nil && !c.Siblings.IsEmpty() {
			tc.Core = c.Siblings.CPUs()[0]
		}
		t.CPUs = append(t.CPUs, tc)
	}
	return t
}

// QueueIRQsOf lists the IRQs of the snapshot's NICs that serve a receive
// queue (rx or combined), with their current affinities.
func QueueIRQsOf(s *host.Snapshot) []QueueIRQ {
	irqs := map[int]host.IRQ{}
	for _, irq := range s.Interrupts.IRQs {
		irqs[irq.Number] = irq
	}
	var out []QueueIRQ
	for _, nic := range s.NICs {
		for _, qi := range nic.QueueIRQs {
			if qi.NoQueue || (qi.Kind != host.QueueRx && qi.Kind != host.QueueCombined) {
				continue
			}
			irq, ok := irqs[qi.IRQ]
			if !ok || irq.Affinity == nil {
				continue
			}
			out = append(out, QueueIRQ{
				Queue: QueueKey{Dev: nic.Name, Queue: qi.Queue}, IRQ: qi.IRQ,
				Affinity: *irq.Affinity, Effective: irq.Effective,
			})
		}
	}
	return out
}

// DriversOf maps the snapshot's NIC names to their drivers (for
// DriverQueues).
func DriversOf(s *host.Snapshot) map[string]string {
	m := map[string]string{}
	for _, nic := range s.NICs {
		m[nic.Name] = nic.Driver
	}
	return m
}

// RedisCPUsOf returns the CPUs the main and io threads of the given
// redis-server processes (all of the snapshot's when pids is empty) run
// on: the thread's (or else the process's) affinity when it is pinned to
// one core's worth of CPUs, else the CPU it last ran on (a thread allowed
// on a whole node may run on any of its cores; avoiding them all would
// leave the node's queues nowhere to go).
func RedisCPUsOf(s *host.Snapshot, pids []int) host.CPUSet {
	want := map[int]bool{}
	for _, p := range pids {
		want[p] = true
	}
	var set host.CPUSet
	for _, p := range s.Processes {
		if len(want) > 0 && !want[p.PID] {
			continue
		}
		for _, th := range p.Threads {
			if th.Role != "main" && th.Role != "io" {
				continue
			}
			set = set.Union(threadCPUs(p, th))
		}
	}
	return set
}

// pinnedMax is the widest affinity that counts as pinned (a CPU and its
// SMT sibling).
const pinnedMax = 2

func threadCPUs(p host.Process, th host.Thread) host.CPUSet {
	for _, allowed := range []*host.CPUSet{th.CPUsAllowed, p.CPUsAllowed} {
		if allowed != nil && !allowed.IsEmpty() && allowed.Len() <= pinnedMax {
			return *allowed
		}
	}
	if th.CPU != nil {
		return host.NewCPUSet(*th.CPU)
	}
	return host.CPUSet{}
}
