package placement

import (
	"os"
	"path/filepath"
	"testing"

	"redline/internal/host"
)

func txQueues(nic *host.NIC, n int) {
	for i := 0; i < n; i++ {
		nic.TxQueues = append(nic.TxQueues, host.TxQueue{Index: i, XPSCPUs: cset("")})
	}
}

// XPS follows the IRQ placement on node 1 (4-7 with SMT siblings
// 12-15): a queue's IRQ CPU and its sibling send on it, the other CPUs
// are dealt over the queues in turn; with more queues than CPUs the
// placement's shared CPUs send on each of their queues; a TX queue
// without IRQs still gets a CPU; without queue IRQs the CPUs are cut in
// blocks; a NIC with one TX queue has nothing to map.
func TestXPS(t *testing.T) {
	for _, tc := range []struct {
		irqQueues, txQueues int
		want                []string
	}{
		{2, 2, []string{"4,6,12,14", "5,7,13,15"}},
		{3, 3, []string{"4,7,12", "5,13,15", "6,14"}},
		{8, 8, []string{"4", "5", "6", "7", "12", "13", "14", "15"}},
		{10, 10, []string{"4", "5", "6", "7", "12", "13", "14", "15", "4", "5"}},
		{2, 3, []string{"4,6,12,14", "5,7,13,15", "6"}},
		{0, 2, []string{"4-7", "12-15"}},
	} {
		snap, nic := machine(tc.irqQueues, false)
		txQueues(nic, tc.txQueues)
		m, ok := XPS(Input{Host: snap, NIC: nic})
		if !ok || m.CPUs.List() != "4-7,12-15" {
			t.Fatalf("%d queues: ok %v, CPUs %s", tc.txQueues, ok, m.CPUs.List())
		}
		for i, want := range tc.want {
			if got := m.Maps[i]; got.List() != want {
				t.Errorf("%d IRQ queues, %d TX queues: tx-%d maps %s, want %s", tc.irqQueues, tc.txQueues, i, got.List(), want)
			}
		}
	}
	snap, nic := machine(1, false)
	txQueues(nic, 1)
	if _, ok := XPS(Input{Host: snap, NIC: nic}); ok {
		t.Error("one TX queue: nothing to map")
	}
}

// A tx queue without an IRQ of its own is sent on from the CPU of the
// vector that handles its completions (enetc's tx rings beyond its
// vectors, QueueIRQ.AlsoTx), not dealt like a queue nobody serves.
func TestXPSFollowsAlsoTx(t *testing.T) {
	snap, nic := machine(2, false)
	nic.QueueIRQs[0].AlsoTx = []int{2, 4}
	nic.QueueIRQs[1].AlsoTx = []int{3, 5}
	txQueues(nic, 6)
	m, ok := XPS(Input{Host: snap, NIC: nic})
	pl, err := IRQs(Input{Host: snap, NIC: nic})
	if !ok || err != nil {
		t.Fatalf("ok %v, %v", ok, err)
	}
	for q := 2; q < 6; q++ {
		if at := pl.Queues[q%2].CPU; !m.Maps[q].Contains(at) {
			t.Errorf("tx-%d maps %s, without CPU %d where vector %d handles it", q, m.Maps[q].List(), at, q%2)
		}
	}
}

// On every fixture tree, each TX queue's XPS map holds the CPU its queue
// IRQs are placed on, and that CPU sends on no queue whose IRQs are
// elsewhere: a CPU sends where its transmit completions are handled
// (scaling.rst, XPS). Checked with no server in view, with every server,
// and with Redis given reserved cores (numa-bind). xps_cpus the capture
// lacks is taken as empty, as a driver that sets no XPS leaves it.
func TestXPSFollowsIRQsOnFixtureTrees(t *testing.T) {
	trees, _ := filepath.Glob("../../testdata/hosts/*")
	checked := 0
	for _, dir := range trees {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		fsys, err := host.NewFS(dir)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := host.Read(fsys, host.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var servers []*host.Process
		for i := range snap.Processes {
			servers = append(servers, &snap.Processes[i])
		}
		for i := range snap.NICs {
			nic := &snap.NICs[i]
			for j := range nic.TxQueues {
				if nic.TxQueues[j].XPSCPUs == nil {
					nic.TxQueues[j].XPSCPUs = &host.CPUSet{}
				}
			}
			for _, in := range []Input{{Host: snap, NIC: nic}, {Host: snap, NIC: nic, Redis: servers}, {Host: snap, NIC: nic, Redis: servers, ReserveForRedis: true}} {
				pl, err := IRQs(in)
				m, ok := XPS(in)
				if err != nil || !ok {
					continue
				}
				checked += alignedXPS(t, filepath.Base(dir)+" "+nic.Name, pl, m)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no fixture tree has queue IRQs and TX queues to compare")
	}
	t.Logf("%d TX queues compared", checked)
}

// alignedXPS checks m against pl and returns how many queues it compared.
func alignedXPS(t *testing.T, what string, pl *IRQPlacement, m XPSMap) int {
	t.Helper()
	n := 0
	for _, q := range pl.Queues {
		set, ok := m.Maps[q.Queue]
		if !ok {
			continue
		}
		n++
		if !set.Contains(q.CPU) {
			t.Errorf("%s: tx-%d's IRQs are placed on CPU %d, its XPS map is %s", what, q.Queue, q.CPU, set.List())
		}
		for _, other := range m.Queues {
			if o := m.Maps[other]; other != q.Queue && o.Contains(q.CPU) && pl.cpuOfQueue(other) != q.CPU {
				t.Errorf("%s: CPU %d takes tx-%d's IRQs but also sends on tx-%d (map %s)", what, q.CPU, q.Queue, other, o.List())
			}
		}
	}
	return n
}
