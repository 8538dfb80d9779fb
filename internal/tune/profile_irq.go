package tune

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"redline/internal/change"
	"redline/internal/host"
)

// buildIRQLocal gives each NIC queue its own CPU on the NIC's node: the
// first thread of every physical core before any SMT sibling (so no core
// takes two queues while a core is free, unlike oeAware's `% numaNum`),
// never a CPU of Redis's main or io threads. The rx and tx IRQs of one
// queue share its CPU, so completions stay where the queue's packets are.
func buildIRQLocal(pc *planContext) error {
	nic, err := pc.pickNIC()
	if err != nil {
		return err
	}
	queues := queueIRQs(nic)
	if len(queues) == 0 {
		return fmt.Errorf("no queue IRQs found for %s (driver %s): nothing to place (redline inspect shows the IRQs it saw)", nic.Name, nic.Driver)
	}
	order, cores, err := pc.irqOrder(nic)
	if err != nil {
		return err
	}
	qs := slices.Sorted(maps.Keys(queues))
	if len(qs) > cores {
		pc.note("%s has %d queues but only %d free cores (%d CPUs) for them: some cores take two queues (ethtool -L %s combined %d would give each a core of its own)", nic.Name, len(qs), cores, len(order), nic.Name, cores)
	}
	pc.stopIrqbalance()
	for i, q := range qs {
		cpu := order[i%len(order)]
		pc.irqCPU.Add(cpu)
		where := fmt.Sprintf("on CPU %d alone", cpu)
		if len(qs) > len(order) {
			where = fmt.Sprintf("on CPU %d (shared: more queues than CPUs)", cpu)
		}
		for _, irq := range queues[q] {
			pc.add("irq-local", change.Change{Kind: change.KindFile, Target: fmt.Sprintf("/proc/irq/%d/smp_affinity_list", irq.IRQ), Value: strconv.Itoa(cpu),
				Why: fmt.Sprintf("%s queue %d (%s) %s, local to the NIC", nic.Name, q, irq.Name, where)})
		}
	}
	for _, u := range nic.UnmappedIRQs {
		pc.note("IRQ %d (%s) of %s serves no known queue: left alone", u.IRQ, u.Name, nic.Name)
	}
	return nil
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

// irqOrder is the CPUs queue IRQs may take, physical cores first. With
// numa-bind in the same plan Redis will move onto the node, so the IRQs
// leave it one whole core per Redis main and io thread. Otherwise they
// avoid the CPUs Redis runs on now, and take the SMT siblings of those
// CPUs only after every other CPU. cores counts the physical cores the
// IRQs have to themselves.
func (pc *planContext) irqOrder(nic *host.NIC) (order []int, cores int, err error) {
	snap := pc.in.Host
	local, _, err := pc.nicCPUs(nic)
	if err != nil {
		return nil, 0, err
	}
	proc, err := pc.pickRedis()
	if err != nil {
		return nil, 0, err
	}
	if proc == nil {
		pc.note("no Redis process found: IRQs placed without regard to Redis's CPUs (start Redis first, or pass --pid)")
		return snap.SpreadOrder(local), len(coresOf(snap, local)), nil
	}
	if pc.want["numa-bind"] {
		cores := coresOf(snap, local)
		need := redisThreads(proc)
		if len(cores) <= need {
			return nil, 0, fmt.Errorf("the NIC's %d local cores cannot give Redis's %d main and io threads cores of their own and still take IRQs; drop numa-bind or irq-local", len(cores), need)
		}
		var reserved host.CPUSet
		for _, c := range cores[len(cores)-need:] {
			reserved = reserved.Union(c)
		}
		return snap.SpreadOrder(local.Difference(reserved)), len(cores) - need, nil
	}
	busy, pinned := redisCPUs(snap, proc)
	if !pinned {
		pc.note("Redis (pid %d) is not pinned: IRQs avoid CPUs %s where its main/io threads last ran, which holds only while the scheduler keeps them there (add numa-bind to pin it)", proc.PID, busy.List())
	}
	free := local.Difference(busy)
	if free.IsEmpty() && !pinned {
		// Unpinned threads that last ran everywhere say little; keep the
		// IRQs off the main thread's CPU at least.
		busy = mainCPU(proc)
		free = local.Difference(busy)
		pc.note("Redis's threads last ran on every CPU local to %s: IRQs avoid only the main thread's CPU %s (numa-bind would keep them off all of Redis's)", nic.Name, busy.List())
	}
	if free.IsEmpty() {
		return nil, 0, fmt.Errorf("every CPU local to %s (%s) runs Redis's main or io threads; IRQs there would share them. Pin Redis elsewhere first, or add numa-bind", nic.Name, local.List())
	}
	order = snap.SpreadOrder(free)
	shared := siblingsOf(snap, busy)
	slices.SortStableFunc(order, func(a, b int) int { return boolRank(shared.Contains(a)) - boolRank(shared.Contains(b)) })
	return order, len(coresOf(snap, free.Difference(shared))), nil
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

// stopIrqbalance puts "stop irqbalance" before the IRQ writes, or notes
// that it will undo them.
func (pc *planContext) stopIrqbalance() {
	ib := pc.in.Host.Irqbalance
	if !ib.Running {
		if ib.EnabledAtBoot {
			pc.note("irqbalance is not running but is enabled at boot; pinned IRQs do not survive a reboot anyway")
		}
		return
	}
	if pc.in.KeepIrqbalance {
		pc.note("irqbalance is running (pids %v) and will rewrite these IRQs' affinity within 10 s; stop it, or ban them with --banirq in %s", ib.PIDs, orDefault(ib.ConfigPath, "its config"))
		return
	}
	pc.add("irq-local", change.Change{Kind: change.KindService, Target: "irqbalance", Value: "inactive",
		Why: "irqbalance rewrites smp_affinity every 10 s and would undo the pinning (started again by rollback)"})
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// buildNUMABind pins every Redis thread to the NIC's node: off the IRQ
// CPUs when irq-local planned them.
func buildNUMABind(pc *planContext) error {
	proc, err := pc.pickRedis()
	if err != nil {
		return err
	}
	if proc == nil {
		return fmt.Errorf("no Redis process found to bind (start it, or pass --pid)")
	}
	nic, err := pc.pickNIC()
	if err != nil {
		return err
	}
	local, node, err := pc.nicCPUs(nic)
	if err != nil {
		return err
	}
	target := local.Difference(pc.irqCPU)
	if target.IsEmpty() {
		target = local
	}
	if cur := processCPUs(proc); !cur.IsEmpty() && cur.IsSubsetOf(target) {
		pc.note("Redis (pid %d) already runs within CPUs %s: numa-bind has nothing to do", proc.PID, cur.List())
		return nil
	}
	where := "the NIC's NUMA node " + strconv.Itoa(node)
	if node < 0 {
		where = "the NIC's CPUs"
	}
	why := fmt.Sprintf("every thread onto %s (CPUs %s)", where, target.List())
	if !pc.irqCPU.IsEmpty() {
		why += ", off the IRQ CPUs " + pc.irqCPU.List()
	}
	pc.bindTo = target
	pc.add("numa-bind", change.Change{Kind: change.KindAffinity, Target: strconv.Itoa(proc.PID), Value: target.List(), Why: why, Guard: guardComm(proc)})
	pc.memoryNote(proc, node)
	return nil
}

// processCPUs is the union of the affinities of the process's threads.
func processCPUs(p *host.Process) host.CPUSet {
	var s host.CPUSet
	if p.CPUsAllowed != nil {
		s = p.CPUsAllowed.Clone()
	}
	for _, t := range p.Threads {
		if t.CPUsAllowed != nil {
			s = s.Union(*t.CPUsAllowed)
		}
	}
	return s
}

// memoryNote says where Redis's memory is: affinity moves threads, not
// pages already allocated.
func (pc *planContext) memoryNote(p *host.Process, node int) {
	var total, away uint64
	for n, b := range p.NUMABytes {
		total += b
		if n != node {
			away += b
		}
	}
	if node >= 0 && total > 0 && away > 0 {
		pc.note("%.0f%% of Redis's memory is on other nodes; affinity does not move it: restart Redis under numactl --cpunodebind=%d --membind=%d to move it", 100*float64(away)/float64(total), node, node)
	}
}

// guardComm makes an affinity change refuse a pid that another program
// has taken since the snapshot.
func guardComm(p *host.Process) string {
	if p.Comm == "" {
		return ""
	}
	return "comm=" + p.Comm
}

// mainCPU is the CPU the main thread last ran on.
func mainCPU(p *host.Process) host.CPUSet {
	for _, t := range p.Threads {
		if t.Role == "main" && t.CPU != nil {
			return host.NewCPUSet(*t.CPU)
		}
	}
	return host.CPUSet{}
}
