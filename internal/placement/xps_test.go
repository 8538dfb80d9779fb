package placement

import (
	"testing"

	"redline/internal/host"
)

func txQueues(nic *host.NIC, n int) {
	for i := 0; i < n; i++ {
		nic.TxQueues = append(nic.TxQueues, host.TxQueue{Index: i, XPSCPUs: cset("")})
	}
}

// XPS maps the NIC's local CPUs (node 1: 4-7,12-15), each to one queue in
// contiguous blocks; with fewer CPUs than queues every queue still gets
// one; a NIC with one TX queue has nothing to map.
func TestXPS(t *testing.T) {
	for _, tc := range []struct {
		queues int
		want   []string
	}{
		{2, []string{"4-7", "12-15"}},
		{3, []string{"4-6", "7,12-13", "14-15"}},
		{8, []string{"4", "5", "6", "7", "12", "13", "14", "15"}},
		{10, []string{"4", "5", "6", "7", "12", "13", "14", "15", "4", "5"}},
	} {
		snap, nic := machine(1, false)
		txQueues(nic, tc.queues)
		m, ok := XPS(snap, nic, nil)
		if !ok || m.CPUs.List() != "4-7,12-15" {
			t.Fatalf("%d queues: ok %v, CPUs %s", tc.queues, ok, m.CPUs.List())
		}
		for i, want := range tc.want {
			if got := m.Maps[i]; got.List() != want {
				t.Errorf("%d queues: tx-%d maps %s, want %s", tc.queues, i, got.List(), want)
			}
		}
	}
	snap, nic := machine(1, false)
	txQueues(nic, 1)
	if _, ok := XPS(snap, nic, nil); ok {
		t.Error("one TX queue: nothing to map")
	}
}
