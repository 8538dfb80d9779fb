// Package placement decides where a NIC's queue interrupts go. It is the
// one answer for doctor's nic-irq-affinity fix and tune's irq-local
// profile, so the two never propose different CPUs for the same queue. It
// is pure: it reads a host.Snapshot and never the machine.
package placement

import (
	"fmt"
	"maps"
	"slices"

	"redline/internal/host"
)

// Input is what IRQs places from.
type Input struct {
	Host *host.Snapshot
	NIC  *host.NIC
	// NICNode overrides the NIC's NUMA node when the firmware reports -1
	// on a machine with several nodes (redline does not guess).
	NICNode *int
	// Redis is the servers whose main and io threads the IRQs keep off:
	// every redis-server on the host, or the one the user chose (--pid);
	// empty when there is none.
	Redis []*host.Process
	// ReserveForRedis leaves one whole core per Redis main and io thread
	// (Redis is about to be bound to the NIC's node, as numa-bind does)
	// instead of avoiding the CPUs Redis runs on now.
	ReserveForRedis bool
}

// Queue is one NIC queue and the CPU its IRQs (rx and tx alike) go to.
type Queue struct {
	Queue int
	IRQs  []host.QueueIRQ
	CPU   int
}

// IRQPlacement is where a NIC's queue IRQs go.
type IRQPlacement struct {
	// Node is the NIC's NUMA node (-1: one-node machine, NIC unknown);
	// Local the CPUs placement may use there.
	Node  int
	Local host.CPUSet
	// Order is the CPUs in the order queues take them; Cores how many
	// physical cores the IRQs have to themselves.
	Order []int
	Cores int
	// Queues in queue order. Shared: more queues than CPUs.
	Queues []Queue
	Shared bool
	// Notes say what placement assumed or could not do, for people: also
	// that it could not see where a redis-server runs (its threads or its
	// affinity refused), so the CPUs placed may overlap it.
	Notes []string
}

// IRQs gives each queue of in.NIC its own CPU on the NIC's node: the first
// thread of every physical core before any SMT sibling (so no core takes
// two queues while a core is free, unlike oeAware's `% numaNum`), never a
// CPU of Redis's main or io threads, isolated and nohz_full CPUs left out.
// The rx and tx IRQs of one queue share its CPU, so completions stay where
// the queue's packets are. IRQs that serve no queue are not placed.
func IRQs(in Input) (*IRQPlacement, error) {
	queues := queueIRQs(in.NIC)
	if len(queues) == 0 {
		return nil, fmt.Errorf("no queue IRQs found for %s (driver %s): nothing to place (redline inspect shows the IRQs it saw)", in.NIC.Name, in.NIC.Driver)
	}
	local, node, notes, err := LocalCPUs(in.Host, in.NIC, in.NICNode)
	if err != nil {
		return nil, err
	}
	p := &IRQPlacement{Node: node, Local: local, Notes: notes}
	if err := p.order(in); err != nil {
		return nil, err
	}
	qs := slices.Sorted(maps.Keys(queues))
	if len(qs) > p.Cores {
		p.note("%s has %d queues but only %d free cores (%d CPUs) for them: some cores take two queues (ethtool -L %s combined %d would give each a core of its own)", in.NIC.Name, len(qs), p.Cores, len(p.Order), in.NIC.Name, p.Cores)
	}
	p.Shared = len(qs) > len(p.Order)
	for i, q := range qs {
		p.Queues = append(p.Queues, Queue{Queue: q, IRQs: queues[q], CPU: p.Order[i%len(p.Order)]})
	}
	return p, nil
}

// CPUOf returns the CPU placed for IRQ number irq.
func (p *IRQPlacement) CPUOf(irq int) (int, bool) {
	for _, q := range p.Queues {
		for _, i := range q.IRQs {
			if i.IRQ == irq {
				return q.CPU, true
			}
		}
	}
	return 0, false
}

func (p *IRQPlacement) note(format string, args ...any) {
	p.Notes = append(p.Notes, fmt.Sprintf(format, args...))
}

// queueIRQs groups the NIC's queue IRQs by queue number.
func queueIRQs(nic *host.NIC) map[int][]host.QueueIRQ {
	out := map[int][]host.QueueIRQ{}
	for _, q := range nic.QueueIRQs {
		if !q.NoQueue {
			out[q.Queue] = append(out[q.Queue], q)
		}
	}
	return out
}

// order is the CPUs queue IRQs may take, physical cores first. With
// ReserveForRedis the IRQs leave the servers one whole core per main and
// io thread. Otherwise they avoid the CPUs every server is confined to,
// and take the SMT siblings of those CPUs only after every other CPU. A
// server free to run anywhere cannot be avoided (and where its threads
// last ran is no basis for a fix that must be the same on every run):
// placement says so.
func (p *IRQPlacement) order(in Input) error {
	p.unseen(in)
	snap, local := in.Host, p.Local
	if len(in.Redis) == 0 {
		p.note("no Redis process found: IRQs placed without regard to Redis's CPUs (start Redis first, or pass --pid)")
		p.Order, p.Cores = snap.SpreadOrder(local), len(coresOf(snap, local))
		return nil
	}
	if in.ReserveForRedis {
		return p.reserve(in)
	}
	busy, unpinned := ConfiguredCPUs(snap, in.Redis)
	for _, proc := range unpinned {
		if len(proc.Refused) > 0 {
			continue // unseen, said by unseen
		}
		p.note("Redis (pid %d) is not pinned: its main or io threads may run on any CPU, so IRQs cannot keep off them (pin it first: redline tune plan --profile numa-bind)", proc.PID)
	}
	free := local.Difference(busy)
	if free.IsEmpty() {
		return p.noFreeCPU(in, local)
	}
	order := snap.SpreadOrder(free)
	shared := siblingsOf(snap, busy)
	slices.SortStableFunc(order, func(a, b int) int { return boolRank(shared.Contains(a)) - boolRank(shared.Contains(b)) })
	p.Order, p.Cores = order, len(coresOf(snap, free.Difference(shared)))
	return nil
}

// reserve leaves the servers' main and io threads whole cores of the NIC's
// node, the last ones, and gives the IRQs the rest.
func (p *IRQPlacement) reserve(in Input) error {
	snap := in.Host
	cores := coresOf(snap, p.Local)
	need := 0
	for _, proc := range in.Redis {
		need += redisThreads(proc)
	}
	if len(cores) <= need {
		return fmt.Errorf("the NIC's %d local cores cannot give %s %d main and io threads cores of their own and still take IRQs; drop numa-bind or irq-local", len(cores), serversOf(in.Redis), need)
	}
	var reserved host.CPUSet
	for _, c := range cores[len(cores)-need:] {
		reserved = reserved.Union(c)
	}
	p.Order, p.Cores = snap.SpreadOrder(p.Local.Difference(reserved)), len(cores)-need
	return nil
}

// noFreeCPU says why no local CPU is free of Redis: one server's threads
// fill the node, or there are more servers than the node has cores.
func (p *IRQPlacement) noFreeCPU(in Input, local host.CPUSet) error {
	if len(in.Redis) == 1 {
		return fmt.Errorf("every CPU local to %s (%s) runs Redis's main or io threads; IRQs there would share them. Pin Redis elsewhere first (redline tune plan --profile numa-bind)", in.NIC.Name, local.List())
	}
	cores := len(coresOf(in.Host, local))
	if len(in.Redis) > cores {
		return fmt.Errorf("%d redis-servers (pids %s) for %d cores local to %s (%s): queue IRQs cannot avoid every server's CPUs, some server shares its CPU with them whatever placement does. Choose the server to protect with --pid, or move servers to another node", len(in.Redis), pidList(in.Redis), cores, in.NIC.Name, local.List())
	}
	return fmt.Errorf("every CPU local to %s (%s) runs the main or io threads of one of the %d redis-servers (pids %s); IRQs there would share them. Pin the servers elsewhere first, or choose the one to protect with --pid", in.NIC.Name, local.List(), len(in.Redis), pidList(in.Redis))
}

func serversOf(procs []*host.Process) string {
	if len(procs) == 1 {
		return "Redis's"
	}
	return fmt.Sprintf("the %d redis-servers' (pids %s)", len(procs), pidList(procs))
}

func pidList(procs []*host.Process) string {
	s := ""
	for i, p := range procs {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(p.PID)
	}
	return s
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// coresOf groups the CPUs of set by physical core (thread_siblings_list),
// cores ordered by their first CPU; a CPU without topology is its own core.
func coresOf(snap *host.Snapshot, set host.CPUSet) []host.CPUSet {
	var cores []host.CPUSet
	seen := host.CPUSet{}
	for _, cpu := range set.CPUs() {
		if seen.Contains(cpu) {
			continue
		}
		core := host.NewCPUSet(cpu)
		if c := snap.CPUByID(cpu); c != nil && c.Siblings != nil {
			core = c.Siblings.Intersect(set)
		}
		seen = seen.Union(core)
		cores = append(cores, core)
	}
	return cores
}

// siblingsOf is every hardware thread of the cores of set.
func siblingsOf(snap *host.Snapshot, set host.CPUSet) host.CPUSet {
	out := set.Clone()
	for _, cpu := range set.CPUs() {
		if c := snap.CPUByID(cpu); c != nil && c.Siblings != nil {
			out = out.Union(*c.Siblings)
		}
	}
	return out
}

// redisThreads counts the main and io threads: each gets a CPU.
func redisThreads(p *host.Process) int {
	n := 0
	for _, t := range p.Threads {
		if t.Role == "main" || t.Role == "io" {
			n++
		}
	}
	return max(n, 1)
}

// unseen notes each redis-server placement could not see: one the
// snapshot left out because its threads were refused, and one of
// in.Redis whose status files were refused (its affinity is unknown, not
// "any CPU").
func (p *IRQPlacement) unseen(in Input) {
	for _, u := range in.Host.UnseenProcesses {
		p.note("could not see %s pid %d (%s): the CPUs proposed may overlap its threads", u.Comm, u.PID, u.Why)
	}
	for _, proc := range in.Redis {
		if len(proc.Refused) > 0 {
			p.note("could not read where redis-server pid %d may run (%s refused): the CPUs proposed may overlap its threads", proc.PID, proc.Refused[0])
		}
	}
}
