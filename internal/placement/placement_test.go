package placement

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"redline/internal/host"
)

func iptr(i int) *int { return &i }

func cset(list string) *host.CPUSet {
	s, err := host.ParseCPUList(list)
	if err != nil {
		panic(err)
	}
	return &s
}

// machine is 2 sockets x 4 cores x 2 threads: node 0 has CPUs 0-3,8-11,
// node 1 4-7,12-15 (n and n+8 are siblings). The NIC is on node 1 with
// queues IRQs 100.. (rx and tx IRQs for queue 0 when split is set, and one
// IRQ that serves no queue).
func machine(queues int, split bool) (*host.Snapshot, *host.NIC) {
	s := &host.Snapshot{}
	s.CPU.Online = cset("0-15")
	for id := 0; id < 16; id++ {
		core, node := id%8, (id%8)/4
		s.CPU.CPUs = append(s.CPU.CPUs, host.CPU{ID: id, Online: true, Package: iptr(node), Core: iptr(core),
			Siblings: cset(fmt.Sprintf("%d,%d", core, core+8)), Node: iptr(node)})
	}
	s.NUMA.Nodes = []host.Node{{ID: 0, CPUs: *cset("0-3,8-11")}, {ID: 1, CPUs: *cset("4-7,12-15")}}
	nic := &host.NIC{Name: "eth0", Driver: "mlx5_core", NUMANode: iptr(1)}
	for q := 0; q < queues; q++ {
		nic.QueueIRQs = append(nic.QueueIRQs, host.QueueIRQ{IRQ: 100 + q, Queue: q, Name: fmt.Sprintf("comp%d", q)})
	}
	if split {
		nic.QueueIRQs = append(nic.QueueIRQs, host.QueueIRQ{IRQ: 200, Queue: 0, Name: "tx0"})
	}
	nic.QueueIRQs = append(nic.QueueIRQs, host.QueueIRQ{IRQ: 300, NoQueue: true, Name: "async"})
	return s, nic
}

// redis is a server whose main and io threads are each confined to the
// CPU they run on.
func redis(mainCPU int, io ...int) *host.Process {
	p := unpinned(mainCPU, io...)
	for i := range p.Threads {
		p.Threads[i].CPUsAllowed = cset(fmt.Sprint(*p.Threads[i].CPU))
	}
	return p
}

// unpinned is a server whose threads may run on any CPU.
func unpinned(mainCPU int, io ...int) *host.Process {
	p := &host.Process{PID: 42, CPUsAllowed: cset("0-15"), Threads: []host.Thread{{TID: 42, Role: "main", CPU: iptr(mainCPU)}}}
	for i, c := range io {
		p.Threads = append(p.Threads, host.Thread{TID: 43 + i, Role: "io", CPU: iptr(c)})
	}
	return p
}

// pinned is a redis-server whose one main thread is confined to list.
func pinned(pid int, list string) *host.Process {
	return &host.Process{PID: pid, CPUsAllowed: cset(list), Threads: []host.Thread{{TID: pid, Role: "main"}}}
}

func servers(ps ...*host.Process) []*host.Process { return ps }

func TestIRQs(t *testing.T) {
	cases := []struct {
		name    string
		queues  int
		split   bool
		redis   []*host.Process
		reserve bool
		nicNode *int
		want    map[int]int // IRQ -> CPU
		err     string
	}{
		{name: "no redis: cores first, then siblings", queues: 6,
			want: map[int]int{100: 4, 101: 5, 102: 6, 103: 7, 104: 12, 105: 13}},
		// Where an unpinned server's threads last ran changes from one
		// look to the next: placement does not follow it.
		{name: "unpinned redis is not avoided", queues: 2, redis: servers(unpinned(4, 5)),
			want: map[int]int{100: 4, 101: 5}},
		{name: "rx and tx of a queue share its CPU", queues: 2, split: true,
			want: map[int]int{100: 4, 200: 4, 101: 5}},
		{name: "off redis's CPUs, its siblings last", queues: 6, redis: servers(redis(5, 6)),
			want: map[int]int{100: 4, 101: 7, 102: 12, 103: 15, 104: 13, 105: 14}},
		{name: "more queues than CPUs wrap", queues: 9,
			want: map[int]int{100: 4, 101: 5, 102: 6, 103: 7, 104: 12, 105: 13, 106: 14, 107: 15, 108: 4}},
		{name: "reserve whole cores for redis", queues: 3, redis: servers(redis(5)), reserve: true,
			want: map[int]int{100: 4, 101: 5, 102: 6}},
		{name: "nic node override", queues: 2, nicNode: iptr(0),
			want: map[int]int{100: 0, 101: 1}},
		{name: "every local CPU busy", queues: 1, redis: servers(pinned(42, "4-7,12-15")), err: "runs Redis's main or io threads"},
		// The second server's CPUs are avoided too, not just the first's.
		{name: "off every server's CPUs", queues: 4, redis: servers(redis(5), pinned(50, "6"), pinned(51, "12")),
			want: map[int]int{100: 7, 101: 15, 102: 4, 103: 13}},
		{name: "reserve cores for every server", queues: 2, redis: servers(redis(5), pinned(50, "6")), reserve: true,
			want: map[int]int{100: 4, 101: 5}},
		{name: "more servers than cores", queues: 1, redis: servers(pinned(50, "4,12"), pinned(51, "5,13"), pinned(52, "6,14"), pinned(53, "7,15"), pinned(54, "7")),
			err: "5 redis-servers (pids 50,51,52,53,54) for 4 cores local to eth0"},
		{name: "servers fill the node", queues: 1, redis: servers(pinned(50, "4-5,12-13"), pinned(51, "6-7,14-15")),
			err: "one of the 2 redis-servers (pids 50,51)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap, nic := machine(tc.queues, tc.split)
			p, err := IRQs(Input{Host: snap, NIC: nic, NICNode: tc.nicNode, Redis: tc.redis, ReserveForRedis: tc.reserve})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[int]int{}
			for _, q := range p.Queues {
				for _, irq := range q.IRQs {
					got[irq.IRQ] = q.CPU
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			if cpu, ok := p.CPUOf(100); !ok || cpu != tc.want[100] {
				t.Errorf("CPUOf(100) = %d, %v", cpu, ok)
			}
		})
	}
}

func TestLocalCPUs(t *testing.T) {
	snap, nic := machine(1, false)
	snap.CPU.Isolated = cset("7,15")
	cpus, node, notes, err := LocalCPUs(snap, nic, nil)
	if err != nil || node != 1 || cpus.List() != "4-6,12-14" || len(notes) != 1 {
		t.Errorf("LocalCPUs = %s, %d, %q, %v", cpus.List(), node, notes, err)
	}
	nic.NUMANode = iptr(-1)
	if _, _, _, err := LocalCPUs(snap, nic, nil); err == nil || !strings.Contains(err.Error(), "--nic-node") {
		t.Errorf("unknown node on two nodes: %v", err)
	}
}
