package rules

import (
	"fmt"

	"redline/internal/change"
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "irq-redis-overlap", Section: "network", Severity: doctor.Medium,
		Title:  "The server's main thread shares its CPU with NIC interrupts",
		Why:    "softirq work on the main thread's CPU steals the single thread that serves every command; separating them gave +26% QPS",
		Source: "KP (Redis on the NIC node but not on the IRQ cores); ALI (+26%); oracle/bpftune#85 (+30%)",
		Needs:  doctor.NeedHost | doctor.NeedRedisProcess,
		Check:  checkIRQOverlap,
	})
}

// hotShare is the share of all NET_RX softirqs above which one CPU is the
// network's CPU.
const hotShare = 0.5

func checkIRQOverlap(f *doctor.Facts) doctor.Result {
	t := f.MainThread()
	if t == nil || t.CPU == nil {
		return doctor.Unchecked("the main thread's CPU is unknown")
	}
	cpu := *t.CPU
	p := f.RedisProcess()
	tev := doctor.Ev(fmt.Sprintf("/proc/%d/task/%d/stat last CPU", p.PID, t.TID), cpu)
	for _, n := range f.TargetNICs() {
		if irqs := overlapIRQs(f, n); len(irqs) > 0 {
			fix := new(doctor.Fix)
			pl, err := placeIRQs(f, n)
			if err != nil {
				fix.Advice = []string{fmt.Sprintf("move the IRQs off CPU %d; no placement to propose: %v", cpu, err)}
			}
			evs := []doctor.Evidence{tev}
			for _, irq := range irqs {
				cpus, src, _ := irqCPUs(irq)
				evs = append(evs, doctor.Ev(src, cpus.List()))
				if err != nil {
					continue
				}
				if to, ok := pl.CPUOf(irq.Number); ok && to != cpu {
					fix.Set(change.KindFile, fmt.Sprintf("/proc/irq/%d/smp_affinity_list", irq.Number), fmt.Sprint(to), affinityList(irq), "move the IRQ off the main thread's CPU")
				}
			}
			return doctor.Fire("%d queue IRQ(s) of %s are pinned to CPU %d, where the server's main thread runs", len(irqs), n.Name, cpu).With(evs...).WithFix(fix)
		}
	}
	hot, share, total := hottestNetRx(f)
	if hot == cpu && share >= hotShare && f.OnlineCPUs().Len() > 1 {
		return doctor.Fire("CPU %d handles %.0f%% of NET_RX softirqs and runs the server's main thread", cpu, share*100).
			With(tev, doctor.Ev("/proc/softirqs NET_RX on CPU "+fmt.Sprint(cpu), fmt.Sprintf("%.0f%% of %d", share*100, total))).
			WithFix(&doctor.Fix{NeedsRoot: true, Advice: []string{
				fmt.Sprintf("move the server off CPU %d (taskset -a -p -c LIST %d) or move the NIC's IRQs and RPS elsewhere", cpu, p.PID),
			}})
	}
	return doctor.Pass("no NIC queue IRQ on the main thread's CPU %d", cpu).With(tev)
}
