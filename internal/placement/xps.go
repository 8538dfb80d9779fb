package placement

import (
	"fmt"

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

// XPS computes the XPS maps of nic: THE map doctor's xps fix and tune's
// rps-xps profile write. With as many CPUs as queues or more, the CPUs in
// ascending order are cut into contiguous blocks, one per queue (CPU at
// position i sends on queue i*queues/cpus, as virtio_net sets them
// itself), so each CPU sends on one queue; with fewer CPUs, queue i gets
// CPU i mod cpus, so no queue is left with an empty map. nicNode, when
// set, overrides the NIC's node. ok is false when nic has fewer than two
// TX queues with a readable xps_cpus: there is nothing to map.
func XPS(snap *host.Snapshot, nic *host.NIC, nicNode *int) (m XPSMap, ok bool) {
	for _, q := range nic.TxQueues {
		if !q.XPSUnsupported && q.XPSCPUs != nil {
			m.Queues = append(m.Queues, q.Index)
		}
	}
	if len(m.Queues) < 2 {
		return m, false
	}
	cpus, _, notes, err := LocalCPUs(snap, nic, nicNode)
	m.Notes = notes
	if err != nil {
		cpus = OnlineCPUs(snap)
		m.Notes = append(m.Notes, fmt.Sprintf("XPS maps every online CPU (%s): %v", cpus.List(), err))
	}
	if cpus.IsEmpty() {
		return m, false
	}
	m.CPUs = cpus
	m.Maps = make(map[int]host.CPUSet, len(m.Queues))
	list := cpus.CPUs()
	nq := len(m.Queues)
	if len(list) >= nq {
		for i, c := range list {
			q := m.Queues[i*nq/len(list)]
			s := m.Maps[q]
			s.Add(c)
			m.Maps[q] = s
		}
		return m, true
	}
	for i, q := range m.Queues {
		m.Maps[q] = host.NewCPUSet(list[i%len(list)])
	}
	return m, true
}
