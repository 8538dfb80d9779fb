package rules

import (
	"fmt"

	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "irq-redis-overlap", Section: "network", Severity: doctor.Medium,
		Title:  "The server's main thread shares its CPU with NIC interrupts",
		Why:    "softirq work on the main thread's CPU steals the single thread that serves every command; separating them gave +26% QPS",
		Source: "KP (Redis on the NIC node but not on the IRQ cores); ALI (+26%); oracle/bpftune#85 (+30%)",
		Reads:  []string{"interrupts", "irq", "nics", "softirqs"},
		Needs:  doctor.NeedHost | doctor.NeedRedisProcess,
		Proves: []string{"/proc/irq/*/smp_affinity_list", "/proc/*/status Cpus_allowed_list|cgroup * cpuset.cpus.effective"},
		Check:  checkIRQOverlap,
	})
}

// hotShare is the share of all NET_RX softirqs above which one CPU is the
// network's CPU.
const hotShare = 0.5

// The check reads configured affinity only (smp_affinity_list, the main
// thread's allowed CPUs): the CPU a thread last ran on and x86's
// effective_affinity (one CPU picked from the list) change from one run to
// the next, and a finding that flips would propose a different fix each
// time.
func checkIRQOverlap(f *doctor.Facts) doctor.Result {
	main, mev, ok := mainCPUs(f)
	if !ok {
		return doctor.Unchecked("the main thread's allowed CPUs are unknown")
	}
	if online := f.OnlineCPUs(); !online.IsEmpty() && online.IsSubsetOf(main) {
		return doctor.Skip("the main thread may run on every CPU (%s): it meets NIC interrupts wherever they are pinned; confine it first (see redis-numa-spread, nic-numa-locality)", main.List())
	}
	var evs []doctor.Evidence
	for _, n := range f.TargetNICs() {
		if irqs := overlapIRQs(f, n); len(irqs) > 0 {
			return fireOverlap(f, n, irqs, main, mev)
		}
		if len(n.QueueIRQs) > 0 {
			evs = append(evs, doctor.Ev(fmt.Sprintf("/proc/irq/{%s}/smp_affinity_list", queueIRQList(n)), affinityUnion(f, n).List()))
		}
	}
	if hot, share, total := hottestNetRx(f); main.Contains(hot) && share >= hotShare && f.OnlineCPUs().Len() > 1 {
		return doctor.Fire("CPU %d, where the server's main thread may run, handles %.0f%% of NET_RX softirqs", hot, share*100).
			With(append(mev, doctor.Ev("/proc/softirqs NET_RX on CPU "+fmt.Sprint(hot), fmt.Sprintf("%.0f%% of %d", share*100, total)))...).
			WithFix(&doctor.Fix{NeedsRoot: true, Advice: []string{
				fmt.Sprintf("confine the server to CPUs other than %d (taskset -a -p -c LIST %s), or move the NIC's IRQs and RPS elsewhere", hot, redisPid(f)),
			}})
	}
	if len(evs) == 0 {
		return doctor.Skip("no NIC with mapped queue IRQs")
	}
	return doctor.Pass("no NIC queue IRQ is configured onto the main thread's CPUs %s", main.List()).With(append(mev, evs...)...)
}

func fireOverlap(f *doctor.Facts, n *host.NIC, irqs []*host.IRQ, main host.CPUSet, mev []doctor.Evidence) doctor.Result {
	fix := new(doctor.Fix)
	pl, err := placeIRQs(f, n)
	evs := append([]doctor.Evidence(nil), mev...)
	for _, irq := range irqs {
		evs = append(evs, doctor.Ev(fmt.Sprintf("/proc/irq/%d/smp_affinity_list", irq.Number), irq.Affinity.List()))
		if err != nil {
			continue
		}
		if to, ok := pl.CPUOf(irq.Number); ok && !main.Contains(to) {
			fix.IRQ(irq.Number, to, affinityList(irq), "move the IRQ off the main thread's CPUs")
		}
	}
	if len(fix.Changes) == 0 {
		why := "placement has no CPU of the NIC's node outside the main thread's"
		if err != nil {
			why = err.Error()
		}
		fix.NeedsRoot = true
		fix.Advice = []string{fmt.Sprintf("no IRQ placement off CPUs %s (%s): confine the server to CPUs without queue IRQs instead (taskset -a -p -c LIST %s)", main.List(), why, redisPid(f))}
	}
	return doctor.Fire("%d queue IRQ(s) of %s are pinned within CPUs %s, where the server's main thread may run", len(irqs), n.Name, main.List()).With(evs...).WithFix(fix)
}
