package placement

import (
	"fmt"
	"slices"

	"redline/internal/host"
)

// XPSMap is where XPS sends from: for each TX queue of a NIC whose
// xps_cpus can be written, the CPUs that transmit on it.
type XPSMap struct {
	// CPUs are the CPUs mapped: the NIC's local CPUs (LocalCPUs), or
	// every online CPU when the NIC's node is unknown on a machine of
	// several nodes (a CPU in no map would pick a queue by hash).
	CPUs host.CPUSet
	// Queues lists the TX queue indexes in order, Maps their CPUs.
	Queues []int
	Maps   map[int]host.CPUSet
	Notes  []string
}

// XPS computes the XPS maps of in.NIC: THE map doctor's xps fix and tune's
// rps-xps profile write. It follows IRQs on the same input, so that a CPU
// sends on the queue whose transmit completions it handles (scaling.rst,
// XPS: the CPUs sharing a queue should share a cache with the CPU that
// takes its interrupts): the CPU a queue's IRQs are placed on sends on
// that queue, its SMT siblings too, and the other CPUs (Redis's among
// them) are dealt over the placed queues in turn. A queue left with no
// CPU (no IRQ of its own) gets one in turn, so no map is empty. When the
// IRQs cannot be placed the CPUs are cut into contiguous blocks, one per
// queue (blockXPS). ok is false when the NIC has fewer than two TX queues
// with a readable xps_cpus: there is nothing to map.
func XPS(in Input) (m XPSMap, ok bool) {
	for _, q := range in.NIC.TxQueues {
		if !q.XPSUnsupported && q.XPSCPUs != nil {
			m.Queues = append(m.Queues, q.Index)
		}
	}
	if len(m.Queues) < 2 {
		return m, false
	}
	cpus, _, notes, err := LocalCPUs(in.Host, in.NIC, in.NICNode)
	m.Notes = notes
	if err != nil {
		cpus = OnlineCPUs(in.Host)
		m.Notes = append(m.Notes, fmt.Sprintf("XPS maps every online CPU (%s): %v", cpus.List(), err))
	}
	if cpus.IsEmpty() {
		return m, false
	}
	m.CPUs = cpus
	pl, err := IRQs(in)
	if err != nil {
		m.Notes = append(m.Notes, fmt.Sprintf("XPS cut into blocks of CPUs, not following the queue IRQs: %v", err))
		m.Maps = blockXPS(cpus.CPUs(), m.Queues)
		return m, true
	}
	m.Maps = irqXPS(in.Host, cpus.CPUs(), m.Queues, pl)
	return m, true
}

// irqXPS maps each CPU of list to the queues whose IRQs pl places on it or
// on its SMT sibling, the others to the placed queues in turn.
func irqXPS(snap *host.Snapshot, list, queues []int, pl *IRQPlacement) map[int]host.CPUSet {
	maps := make(map[int]host.CPUSet, len(queues))
	add := func(q, cpu int) {
		s := maps[q]
		s.Add(cpu)
		maps[q] = s
	}
	var placed []int
	for _, q := range queues {
		if pl.cpuOfQueue(q) >= 0 {
			placed = append(placed, q)
		}
	}
	next := 0
	for _, cpu := range list {
		own := pl.queuesOn(snap, cpu, queues)
		for _, q := range own {
			add(q, cpu)
		}
		if len(own) == 0 && len(placed) > 0 {
			add(placed[next%len(placed)], cpu)
			next++
		}
	}
	for i, q := range queues {
		if maps[q].IsEmpty() {
			add(q, list[i%len(list)])
		}
	}
	return maps
}

// queuesOn returns the queues of queues whose IRQs are placed on cpu, or
// else on an SMT sibling of cpu (the same core's caches).
func (p *IRQPlacement) queuesOn(snap *host.Snapshot, cpu int, queues []int) []int {
	core := host.NewCPUSet(cpu)
	if c := snap.CPUByID(cpu); c != nil && c.Siblings != nil {
		core = *c.Siblings
	}
	var own, sibling []int
	for _, q := range queues {
		switch at := p.cpuOfQueue(q); {
		case at == cpu:
			own = append(own, q)
		case at >= 0 && core.Contains(at):
			sibling = append(sibling, q)
		}
	}
	if len(own) > 0 {
		return own
	}
	return sibling
}

// cpuOfQueue is the CPU where tx queue's completions are handled: the one
// its own IRQs are placed on, else that of a vector serving it besides its
// own queue (qlcnic's IF-tx-0-rx-N, enetc's tx rings beyond its vectors:
// QueueIRQ.AlsoTx); -1 when none is placed.
func (p *IRQPlacement) cpuOfQueue(queue int) int {
	also := -1
	for _, q := range p.Queues {
		if q.Queue == queue {
			return q.CPU
		}
		for _, irq := range q.IRQs {
			if also < 0 && slices.Contains(irq.AlsoTx, queue) {
				also = q.CPU
			}
		}
	}
	return also
}

// blockXPS cuts list, in ascending order, into contiguous blocks, one per
// queue (CPU at position i sends on queue i*queues/cpus, as virtio_net
// sets them itself), so each CPU sends on one queue; with fewer CPUs than
// queues, queue i gets CPU i mod cpus, so no queue is left with an empty
// map.
func blockXPS(list, queues []int) map[int]host.CPUSet {
	maps := make(map[int]host.CPUSet, len(queues))
	nq := len(queues)
	if len(list) >= nq {
		for i, c := range list {
			q := queues[i*nq/len(list)]
			s := maps[q]
			s.Add(c)
			maps[q] = s
		}
		return maps
	}
	for i, q := range queues {
		maps[q] = host.NewCPUSet(list[i%len(list)])
	}
	return maps
}
