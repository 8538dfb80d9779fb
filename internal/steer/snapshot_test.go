package steer

import (
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/host"
)

// nodeTopology is the snapshot's topology by NUMA node.
func nodeTopology(t *testing.T, s *host.Snapshot) Topology {
	t.Helper()
	topo, err := TopologyIn(s, DomainNode)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

func readHost(t *testing.T, name string) *host.Snapshot {
	t.Helper()
	fs, err := host.NewFS(filepath.Join("..", "..", "testdata", "hosts", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.Read(fs, host.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// simulate runs periods in which every queue's packets are consumed on
// consumer(queue), applying the moves; it returns the moves per period.
func simulate(t *testing.T, s *host.Snapshot, periods int, consumer func(QueueIRQ) int) [][]Move {
	t.Helper()
	topo, irqs := nodeTopology(t, s), QueueIRQsOf(s)
	if len(topo.CPUs) == 0 || len(irqs) == 0 {
		t.Fatalf("fixture has %d CPUs and %d queue IRQs", len(topo.CPUs), len(irqs))
	}
	e := NewEngine(Options{})
	var out [][]Move
	for p := 0; p < periods; p++ {
		per := &Period{Queues: map[QueueKey]*QueueCounts{}}
		for _, q := range irqs {
			per.Queues[q.Queue] = &QueueCounts{Matched: 1000, Consumers: map[int]uint64{consumer(q): 1000}}
		}
		d := e.Step(Input{Period: per, Topology: topo, IRQs: irqs, RedisCPUs: RedisCPUsOf(s, nil)})
		for _, m := range d.Moves {
			for i := range irqs {
				if irqs[i].IRQ == m.IRQ {
					irqs[i].Affinity, irqs[i].Effective = host.NewCPUSet(m.To), nil
				}
			}
			e.Applied(m)
		}
		out = append(out, d.Moves)
	}
	return out
}

// On the Kunpeng model, every queue consumed on the last node converges
// within 3 periods, one distinct CPU per queue while the node has CPUs
// left, and then nothing moves.
func TestSnapshotWrongNodeConverges(t *testing.T) {
	s := readHost(t, "kunpeng920-4node-hinic")
	topo := nodeTopology(t, s)
	last := topo.CPUs[len(topo.CPUs)-1]
	node := last.Node
	perPeriod := simulate(t, s, 4, func(QueueIRQ) int { return last.ID })
	if len(perPeriod[0]) != 0 {
		t.Errorf("moves in period 1, before hysteresis allows: %+v", perPeriod[0])
	}
	// CPUs of the node already serving a queue that stays there.
	used := map[int]bool{}
	moved := map[int]bool{}
	for _, m := range perPeriod[1] {
		moved[m.IRQ] = true
	}
	nodeCPUs := 0
	for _, c := range topo.CPUs {
		if c.Node == node {
			nodeCPUs++
		}
	}
	for _, q := range QueueIRQsOf(s) {
		if cpus := q.on(); !moved[q.IRQ] && cpus.Len() == 1 {
			used[cpus.CPUs()[0]] = true
		}
	}
	if len(perPeriod[1]) == 0 {
		t.Fatal("no moves in period 2")
	}
	for _, m := range perPeriod[1] {
		if m.Node != node {
			t.Errorf("irq %d moved to node %d, want %d", m.IRQ, m.Node, node)
		}
		if used[m.To] && len(used) < nodeCPUs {
			t.Errorf("irq %d shares CPU %d while the node has free CPUs", m.IRQ, m.To)
		}
		used[m.To] = true
	}
	for p := 2; p < 4; p++ {
		if len(perPeriod[p]) != 0 {
			t.Errorf("period %d: %d moves after convergence: %+v", p+1, len(perPeriod[p]), perPeriod[p])
		}
	}
}

// Where every queue's packets are consumed on the node its IRQ already
// serves, nothing moves.
func TestSnapshotPlacedWellNoMoves(t *testing.T) {
	for _, name := range []string{"kunpeng920-4node-hinic", "x86-2socket-mlx5", "kvm-virtio-multiqueue"} {
		t.Run(name, func(t *testing.T) {
			s := readHost(t, name)
			perPeriod := simulate(t, s, 3, func(q QueueIRQ) int { return q.on().CPUs()[0] })
			for p, moves := range perPeriod {
				for _, m := range moves {
					// Only a queue on redis-server's core may move within its node.
					if !strings.Contains(m.Reason, "a core of redis-server") {
						t.Errorf("period %d: unexpected move %+v", p+1, m)
					}
				}
			}
		})
	}
}

// By LLC, the EPYC capture has 16 domains (two per node); a host whose
// kernel describes no caches has none, and says what to use instead.
func TestTopologyInLLC(t *testing.T) {
	fs, err := host.NewFS(filepath.Join("..", "..", "testdata", "steer", "hosts", "amd-epyc7451"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := host.Read(fs, host.Options{NoProcesses: true})
	if err != nil {
		t.Fatal(err)
	}
	for domain, want := range map[string]int{DomainNode: 8, DomainLLC: 16} {
		topo, err := TopologyIn(s, domain)
		if err != nil || topo.Domains() != want || len(topo.CPUs) != 96 {
			t.Errorf("%s: %d domains of %d CPUs, %v; want %d of 96", domain, topo.Domains(), len(topo.CPUs), err, want)
		}
	}
	if _, err := TopologyIn(readHost(t, "local-virtio-2cpu"), DomainLLC); err == nil || !strings.Contains(err.Error(), "use --domain node") {
		t.Errorf("no cache information: %v", err)
	}
}

// The target, on every multi-node fixture: when all the traffic
// is consumed on one node and queues start elsewhere, every queue IRQ is
// delivered on that node by the end of period 3, and nothing moves after.
func TestSnapshotConvergesWithin3Periods(t *testing.T) {
	for _, name := range []string{"kunpeng920-4node-hinic", "x86-2socket-mlx5"} {
		t.Run(name, func(t *testing.T) {
			s := readHost(t, name)
			topo := nodeTopology(t, s)
			consumer := topo.CPUs[len(topo.CPUs)-1]
			nodeOf := map[int]int{}
			for _, c := range topo.CPUs {
				nodeOf[c.ID] = c.Node
			}
			wrong := 0
			for _, q := range QueueIRQsOf(s) {
				if nodeOf[q.on().CPUs()[0]] != consumer.Node {
					wrong++
				}
			}
			if wrong == 0 {
				t.Fatalf("no queue starts off node %d: nothing to converge", consumer.Node)
			}
			perPeriod := simulate(t, s, 6, func(QueueIRQ) int { return consumer.ID })
			final := map[int]int{} // irq -> CPU after the moves
			for _, q := range QueueIRQsOf(s) {
				final[q.IRQ] = q.on().CPUs()[0]
			}
			lastMove := 0
			for p, moves := range perPeriod {
				if len(moves) > 0 {
					lastMove = p + 1
				}
				if p >= 3 && len(moves) > 0 {
					t.Errorf("period %d: %d moves after convergence", p+1, len(moves))
				}
				for _, m := range moves {
					final[m.IRQ] = m.To
				}
			}
			for irq, cpu := range final {
				if nodeOf[cpu] != consumer.Node {
					t.Errorf("irq %d on CPU %d (node %d) after 3 periods, want node %d", irq, cpu, nodeOf[cpu], consumer.Node)
				}
			}
			t.Logf("%d of %d queue IRQs started off node %d; all on it after period %d", wrong, len(final), consumer.Node, lastMove)
		})
	}
}

// TestNothingToSteerToward: a one-node host whose CPUs share one cache
// (or whose caches are not described) has nothing to steer toward; a
// two-node host has.
func TestNothingToSteerToward(t *testing.T) {
	for name, want := range map[string]bool{"local-virtio-2cpu": true, "x86-2socket-mlx5": false, "kunpeng920-4node-hinic": false} {
		if got := NothingToSteerToward(readHost(t, name)) != ""; got != want {
			t.Errorf("%s: nothing to steer toward = %v, want %v", name, got, want)
		}
	}
}
