package rules

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"redline/internal/cpuset"
	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/testutil"
)

// interruptsFile writes a /proc/interrupts with ncpu columns and one
// i40e-named queue IRQ per row of counts (IRQ 100+q, "i40e-eth0-TxRx-q").
func interruptsFile(ncpu int, rows [][]uint64) string {
	var b strings.Builder
	for c := range ncpu {
		fmt.Fprintf(&b, " CPU%d", c)
	}
	b.WriteString("\n")
	for q, row := range rows {
		fmt.Fprintf(&b, "%d:", 100+q)
		for c := range ncpu {
			fmt.Fprintf(&b, " %d", row[c])
		}
		fmt.Fprintf(&b, " IR-PCI-MSI %d-edge i40e-eth0-TxRx-%d\n", q+1, q)
	}
	return b.String()
}

// nicTree is a capture of /proc/interrupts and eth0's sysfs (i40e, nq
// queue pairs), without CPU or NUMA topology, as most public captures are.
func nicTree(t *testing.T, ncpu int, rows [][]uint64) *doctor.Facts {
	t.Helper()
	dev := "sys/devices/pci0000:00/0000:00:03.0"
	files := map[string]string{
		"proc/interrupts":           interruptsFile(ncpu, rows),
		dev + "/net/eth0/operstate": "up\n",
	}
	for q := range rows {
		files[fmt.Sprintf("%s/net/eth0/queues/rx-%d/rps_cpus", dev, q)] = "0\n"
	}
	root := testutil.WriteTree(t, files)
	symlink(t, root, "sys/class/net/eth0", "../../devices/pci0000:00/0000:00:03.0/net/eth0")
	symlink(t, root, "sys/bus/pci/drivers/i40e/.keep", "")
	symlink(t, root, dev+"/net/eth0/device", "../../../0000:00:03.0")
	symlink(t, root, dev+"/driver", "../../../bus/pci/drivers/i40e")
	return treeFacts(t, root)
}

func runOne(t *testing.T, f *doctor.Facts, id string) doctor.Finding {
	t.Helper()
	return run(t, f, id)
}

// The capture: all 8 queue IRQs of a NIC delivered to CPU 0 of 48.
func TestConcentrationAllOnCPU0Of48(t *testing.T) {
	rows := make([][]uint64, 8)
	for q := range rows {
		rows[q] = make([]uint64, 48)
		rows[q][0] = uint64(100000 + q)
	}
	f := nicTree(t, 48, rows)
	if len(f.Host.NICs) == 0 || len(f.Host.NICs[0].QueueIRQs) != 8 {
		t.Fatalf("the tree does not map 8 queue IRQs: %+v", f.Host.NICs)
	}
	fd := runOne(t, f, "nic-irq-concentration")
	if fd.Status != doctor.Fired || !strings.Contains(fd.Message, "CPU 0, 1 of the 48 CPUs") {
		t.Fatalf("%s: %s%s", fd.Status, fd.Message, fd.Reason)
	}
	if !strings.Contains(fd.Evidence[0].Note, "since boot") {
		t.Errorf("the evidence does not say which counts: %+v", fd.Evidence[0])
	}
	if fd := runOne(t, f, "nic-irq-sharing"); fd.Status != doctor.Fired || !strings.Contains(fd.Message, "share CPU 0") {
		t.Errorf("sharing: %s: %s%s", fd.Status, fd.Message, fd.Reason)
	}
}

// With --sample the rate decides: since boot everything went to CPU 0,
// but in the window the queues were on their own CPUs.
func TestConcentrationJudgesTheSampleWindow(t *testing.T) {
	f := healthyFacts()
	withSample(f)
	for i := range f.Prev.Interrupts.IRQs {
		f.Prev.Interrupts.IRQs[i].Counts = []uint64{0, 0, 0, 0, 0, 0, 0, 0}
		f.Host.Interrupts.IRQs[i].Counts = []uint64{0, 0, 0, 0, 0, 0, 0, 0}
	}
	// since boot: 1e6 on CPU 0 for both; in the window: 500 each on CPUs 4 and 5.
	f.Prev.Interrupts.IRQs[0].Counts[0], f.Prev.Interrupts.IRQs[1].Counts[0] = 1000000, 1000000
	f.Host.Interrupts.IRQs[0].Counts[0], f.Host.Interrupts.IRQs[1].Counts[0] = 1000000, 1000000
	f.Host.Interrupts.IRQs[0].Counts[4], f.Host.Interrupts.IRQs[1].Counts[5] = 500, 500
	fd := runOne(t, f, "nic-irq-concentration")
	if fd.Status != doctor.OK || !strings.Contains(fd.Evidence[0].Note, "in the last 5s") {
		t.Fatalf("%s: %s%s %+v", fd.Status, fd.Message, fd.Reason, fd.Evidence)
	}
	f.Prev = nil
	if fd := runOne(t, f, "nic-irq-concentration"); fd.Status != doctor.Fired {
		t.Errorf("since boot: %s, want fired", fd.Status)
	}
}

// The split: every queue's interrupts 31%/69% across the two
// nodes, on a NIC whose firmware does not give its node: Redis's node is
// the reference and the fix places the queues there.
func TestNodeSplitWithUnknownNICNode(t *testing.T) {
	f := healthyFacts()
	n := nic(f)
	n.NUMANode, n.LocalCPUs = ip(-1), nil
	proc(f).CPUsAllowed = set(host.NewCPUSet(6)) // leave placement CPUs on node 1
	for i := range f.Host.Interrupts.IRQs {
		f.Host.Interrupts.IRQs[i].Counts = []uint64{31000, 0, 0, 0, 0, 69000, 0, 0}
	}
	fd := runOne(t, f, "nic-irq-node-split")
	if fd.Status != doctor.Fired || !strings.Contains(fd.Message, "2 of 2 queues of eth0 had their interrupts split across nodes") {
		t.Fatalf("%s: %s%s", fd.Status, fd.Message, fd.Reason)
	}
	if !strings.Contains(fd.Evidence[0].Note, "the node Redis is confined to is the reference") {
		t.Errorf("evidence does not say Redis's node was used: %+v", fd.Evidence[0])
	}
	if fd.Fix == nil || len(fd.Fix.Changes) != 2 {
		t.Fatalf("fix: %+v", fd.Fix)
	}
	for _, c := range fd.Fix.Changes {
		cpu := 0
		fmt.Sscan(c.Value, &cpu)
		if cpu < 4 || cpu > 7 {
			t.Errorf("%s -> %s, not on Redis's node 1", c.Target, c.Value)
		}
	}
}

// Partial trees: with no counts (or too few) the count rules say not
// checked and why; without topology the node rule says so.
func TestIRQCountRulesOnPartialTrees(t *testing.T) {
	f := nicTree(t, 4, [][]uint64{{3, 0, 0, 0}, {0, 2, 0, 0}})
	for _, id := range []string{"nic-irq-concentration", "nic-irq-sharing"} {
		if fd := runOne(t, f, id); fd.Status != doctor.NotChecked || !strings.Contains(fd.Reason, "too few interrupts") {
			t.Errorf("%s: %s %s", id, fd.Status, fd.Reason)
		}
	}
	if fd := runOne(t, f, "nic-irq-node-split"); fd.Status != doctor.NotChecked || !strings.Contains(fd.Reason, "topology is absent") {
		t.Errorf("node split: %s %s", fd.Status, fd.Reason)
	}
	if fd := runOne(t, f, "irq-affinity-moving"); fd.Status != doctor.NotChecked || !strings.Contains(fd.Reason, "--sample") {
		t.Errorf("moving: %s %s", fd.Status, fd.Reason)
	}
}

// An IRQ pinned to one CPU at both readings whose interrupts in the window
// went elsewhere moved and came back.
func TestMovingWithinTheWindow(t *testing.T) {
	f := healthyFacts()
	withSample(f)
	f.Host.Interrupts.IRQs[0].Counts[6] += 700
	fd := runOne(t, f, "irq-affinity-moving")
	if fd.Status != doctor.Fired || !strings.Contains(fd.Evidence[0].Note, "delivered to CPU 4 at both readings") {
		t.Fatalf("%s: %s%s %+v", fd.Status, fd.Message, fd.Reason, fd.Evidence)
	}
	if !strings.Contains(fd.Message, "something") {
		t.Errorf("irqbalance is not running, yet: %s", fd.Message)
	}
}

func symlink(t *testing.T, root, name, target string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if target == "" { // a directory
		return
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// irq-redis-overlap reads configured affinity only: the CPU the main
// thread last ran on and x86's effective affinity change between runs,
// and neither changes the finding or its fix.
func TestIRQOverlapIsStable(t *testing.T) {
	var first doctor.Finding
	for i, last := range []int{5, 6, 5} {
		f := healthyFacts()
		proc(f).Threads[0].CPUsAllowed = set(host.CPURange(5, 6))
		proc(f).Threads[0].CPU = ip(last)
		f.Host.Interrupts.IRQs[1].Effective = set(host.NewCPUSet(4 + i%2))
		fd := runOne(t, f, "irq-redis-overlap")
		if fd.Status != doctor.Fired || fd.Fix == nil || len(fd.Fix.Changes) != 1 {
			t.Fatalf("run %d: %s %s%s %+v", i, fd.Status, fd.Message, fd.Reason, fd.Fix)
		}
		if i == 0 {
			first = fd
			continue
		}
		if fd.Message != first.Message || fd.Fix.Changes[0] != first.Fix.Changes[0] {
			t.Errorf("run %d differs:\n%s %+v\n%s %+v", i, fd.Message, fd.Fix.Changes, first.Message, first.Fix.Changes)
		}
	}
	if c := first.Fix.Changes[0]; c.Target != "/proc/irq/101/smp_affinity_list" || c.Value == "5" || c.Value == "6" {
		t.Errorf("fix %+v does not move IRQ 101 off CPUs 5-6", c)
	}
}

// With several redis-servers and none chosen, each process rule judges
// every one (the second one here is swapped out); --pid chooses one.
func TestEachRedisServerJudged(t *testing.T) {
	f := healthyFacts()
	f.Redis = nil
	second := *proc(f) // shares the first's slices; neither is changed
	second.PID, second.VmSwap = 200, u(300<<20)
	f.Host.Processes = append(f.Host.Processes, second)
	rep, err := doctor.Run(context.Background(), f, doctor.Options{Only: []string{"redis-swapped"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 2 {
		t.Fatalf("%d findings, want one per server: %+v", len(rep.Findings), rep.Findings)
	}
	got := map[int]doctor.Status{}
	for _, fd := range rep.Findings {
		got[fd.Pid] = fd.Status
	}
	if got[100] != doctor.OK || got[200] != doctor.Fired {
		t.Errorf("statuses by pid: %v", got)
	}
	f.Pid = 100
	if fd := runOne(t, f, "redis-swapped"); fd.Status != doctor.OK || fd.Pid != 0 {
		t.Errorf("--pid 100: %s pid %d", fd.Status, fd.Pid)
	}
	f.Pid = 200
	if fd := runOne(t, f, "redis-swapped"); fd.Status != doctor.Fired {
		t.Errorf("--pid 200: %s", fd.Status)
	}
}

// With several redis-servers and the NIC's node unknown, every server is
// looked at and named, by the CPUs it is confined to: on one node, that
// node is the reference; on two, or with a server free to run anywhere,
// there is none and only splits are judged. Where a main thread last ran
// changes nothing (it changes between runs).
func TestNodeSplitJudgesEveryServer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		second  *host.CPUSet // the second server's affinity (nil: any CPU)
		want    doctor.Status
		note    string
		lastCPU int
	}{
		{"same node", cset(t, "6-7"), doctor.Fired, "node 1: the NIC's node is unknown", 1},
		{"same node, last ran elsewhere", cset(t, "6-7"), doctor.Fired, "node 1: the NIC's node is unknown", 6},
		{"two nodes", cset(t, "1"), doctor.OK, "confined to CPUs of 2 nodes (0,1)", 6},
		{"free", nil, doctor.OK, "may run on any CPU", 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := healthyFacts()
			f.Redis = nil // no server checked, no --pid: every one is judged
			n := nic(f)
			n.NUMANode, n.LocalCPUs = ip(-1), nil
			// every queue entirely on node 0's CPU 0: no split, but away
			// from servers confined to node 1
			for i := range f.Host.Interrupts.IRQs {
				f.Host.Interrupts.IRQs[i].Counts = []uint64{100000, 0, 0, 0, 0, 0, 0, 0}
			}
			first := proc(f)
			first.Threads = slices.Clone(first.Threads)
			confine(first, cset(t, "5"))
			mainThreadOf(first).CPU = ip(tc.lastCPU)
			second := *first
			second.PID = first.PID + 1
			second.Threads = slices.Clone(first.Threads)
			for i := range second.Threads {
				second.Threads[i].TID += 1
			}
			confine(&second, tc.second)
			f.Host.Processes = append(f.Host.Processes, second)
			fd := runOne(t, f, "nic-irq-node-split")
			if fd.Status != tc.want {
				t.Fatalf("%s, want %s: %s%s", fd.Status, tc.want, fd.Message, fd.Reason)
			}
			ev := fd.Evidence[0]
			if !strings.Contains(ev.Source, fmt.Sprintf("pid %d,%d", first.PID, second.PID)) {
				t.Errorf("evidence does not name both pids: %+v", ev)
			}
			if !strings.Contains(ev.Note, tc.note) {
				t.Errorf("note %q, want %q", ev.Note, tc.note)
			}
		})
	}
}

// confine sets the affinity of p and of its threads (nil: any CPU).
func confine(p *host.Process, set *host.CPUSet) {
	p.CPUsAllowed = set
	for i := range p.Threads {
		p.Threads[i].CPUsAllowed = set
	}
}

func cset(t *testing.T, list string) *host.CPUSet {
	t.Helper()
	s, err := cpuset.ParseList(list)
	if err != nil {
		t.Fatal(err)
	}
	return &s
}

// Queue 0 taking 95% of the interrupts on a CPU of its own while queue 1
// runs on another CPU is RSS skew, not IRQ concentration: ok, noted. The
// same counts with queue 1 also on CPU 0 fire.
func TestConcentrationTellsSkewFromPlacement(t *testing.T) {
	skew := make([][]uint64, 2)
	shared := make([][]uint64, 2)
	for q := range skew {
		skew[q], shared[q] = make([]uint64, 8), make([]uint64, 8)
	}
	skew[0][0], skew[1][1] = 95000, 5000
	shared[0][0], shared[1][0] = 95000, 5000
	fd := runOne(t, nicTree(t, 8, skew), "nic-irq-concentration")
	if fd.Status != doctor.OK || len(fd.Notes) == 0 || !strings.Contains(fd.Notes[0], "RSS sends most flows") {
		t.Errorf("skew: %s %s%s %v", fd.Status, fd.Message, fd.Reason, fd.Notes)
	}
	if fd := runOne(t, nicTree(t, 8, shared), "nic-irq-concentration"); fd.Status != doctor.Fired {
		t.Errorf("both on CPU 0: %s %s%s", fd.Status, fd.Message, fd.Reason)
	}
}
