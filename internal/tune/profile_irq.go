package tune

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"redline/internal/change"
	"redline/internal/host"
	"redline/internal/placement"
)

// buildIRQLocal pins each NIC queue's IRQs where placement.IRQs puts
// them (the same CPUs doctor's nic-irq-affinity fix proposes), after
// stopping irqbalance.
func buildIRQLocal(pc *planContext) error {
	nic, err := pc.pickNIC()
	if err != nil {
		return err
	}
	in, err := pc.placementInput(nic)
	if err != nil {
		return err
	}
	pl, err := placement.IRQs(in)
	if err != nil {
		return err
	}
	for _, n := range pl.Notes {
		pc.note("%s", n)
	}
	pc.stopIrqbalance()
	for _, q := range pl.Queues {
		pc.irqCPU.Add(q.CPU)
		where := fmt.Sprintf("on CPU %d alone", q.CPU)
		if pl.Shared {
			where = fmt.Sprintf("on CPU %d (shared: more queues than CPUs)", q.CPU)
		}
		for _, irq := range q.IRQs {
			pc.add("irq-local", change.IRQAffinity(irq.IRQ, q.CPU,
				fmt.Sprintf("%s queue %d (%s) %s, local to the NIC", nic.Name, q.Queue, irq.Name, where)))
		}
	}
	for _, u := range nic.UnmappedIRQs {
		pc.note("IRQ %d (%s) of %s serves no known queue: left alone", u.IRQ, u.Name, nic.Name)
	}
	return nil
}

// placementInput is what placement places nic's queue IRQs from, and XPS
// its TX queues by them: the same answer for irq-local and rps-xps.
func (pc *planContext) placementInput(nic *host.NIC) (placement.Input, error) {
	in := placement.Input{Host: pc.in.Host, NIC: nic, NICNode: pc.in.NICNode, ReserveForRedis: pc.want["numa-bind"]}
	if len(nic.QueueIRQs) > 0 {
		var err error
		if in.Redis, err = pc.redisServers(); err != nil {
			return in, err
		}
	}
	return in, nil
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
		pc.note("%s; stop it, or ban them with --banirq in %s", irqbalanceUndoes(strings.Trim(fmt.Sprint(ib.PIDs), "[]"), "these IRQs"), orDefault(ib.ConfigPath, "its config"))
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

// NICCPUs is where numa-bind would put Redis, for a server started
// there instead of moved (autotune's server.cpus knob): the CPUs local to
// the NIC Redis traffic uses (in.NIC, or the only physical NIC that is
// up), the NUMA node they are on (-1 when the machine has one node and
// the NIC does not say) and the planner's notes.
func NICCPUs(in PlanInput) (cpus host.CPUSet, node int, notes []string, err error) {
	if in.Host == nil {
		return cpus, -1, nil, errors.New("the NIC's CPUs need a host snapshot")
	}
	pc := &planContext{in: in, want: map[string]bool{}, plan: &Plan{}}
	nic, err := pc.pickNIC()
	if err != nil {
		return cpus, -1, nil, err
	}
	cpus, node, err = pc.nicCPUs(nic)
	return cpus, node, pc.plan.Notes, err
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
