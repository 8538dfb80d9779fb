package steer

import (
	"fmt"

	"redline/internal/host"
	"redline/internal/placement"
)

// The domains a queue's IRQ is kept in: the NUMA node of the CPUs that
// consume its packets, or the CPUs sharing their last-level cache (a
// CCX on AMD EPYC, several per node).
const (
	DomainNode = "node"
	DomainLLC  = "llc"
)

// TopologyIn returns the CPUs of a snapshot that may take interrupts
// (placement.IRQCPUs) with their cores and domains: each CPU's NUMA node,
// or its last-level cache (numbered by the cache's lowest CPU). A host
// whose kernel does not describe a CPU's caches has no LLC domains.
func TopologyIn(s *host.Snapshot, domain string) (Topology, error) {
	t := Topology{Domain: domain}
	allowed := placement.IRQCPUs(s)
	for _, c := range s.CPU.CPUs {
		if !allowed.Contains(c.ID) {
			continue
		}
		tc := TopoCPU{ID: c.ID, Core: c.ID}
		switch {
		case domain == DomainLLC && (c.LLC == nil || c.LLC.IsEmpty()):
			return Topology{}, fmt.Errorf("--domain llc: the kernel does not describe CPU %d's caches (/sys/devices/system/cpu/cpu%d/cache): use --domain node", c.ID, c.ID)
		case domain == DomainLLC:
			tc.Node = c.LLC.CPUs()[0]
		case domain != DomainNode && domain != "":
			return Topology{}, fmt.Errorf("--domain %q: want node or llc", domain)
		case c.Node != nil:
			tc.Node = *c.Node
		}
		if c.Siblings != nil && !c.Siblings.IsEmpty() {
			tc.Core = c.Siblings.CPUs()[0]
		}
		t.CPUs = append(t.CPUs, tc)
	}
	return t, nil
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

// RedisCPUsOf returns the CPUs of the main and io threads of the given
// redis-server processes (all of the snapshot's when pids is empty), as
// placement.RedisCPUs judges them: their affinity when it is narrower
// than the machine, else the CPU they last ran on.
func RedisCPUsOf(s *host.Snapshot, pids []int) host.CPUSet {
	want := map[int]bool{}
	for _, p := range pids {
		want[p] = true
	}
	var procs []*host.Process
	for i := range s.Processes {
		if p := &s.Processes[i]; len(want) == 0 || want[p.PID] {
			procs = append(procs, p)
		}
	}
	return placement.ServersCPUs(s, procs)
}

// NothingToSteerToward says, for a host with one NUMA node and no split
// of its last-level cache (one L3, or caches the kernel does not
// describe), that no queue has another node or cache to go to: steer can
// then only keep queue IRQs off the redis-server's cores. "" when the
// host has two domains of either kind.
func NothingToSteerToward(s *host.Snapshot) string {
	node, err := TopologyIn(s, DomainNode)
	if err != nil || node.Domains() > 1 {
		return ""
	}
	if llc, err := TopologyIn(s, DomainLLC); err == nil && llc.Domains() > 1 {
		return ""
	}
	return "one NUMA node and one last-level cache: there is no node or cache to steer a queue's IRQ toward; steer will only move queue IRQs off the redis-server's cores (--dry-run shows whether it would move any)"
}
