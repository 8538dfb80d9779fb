package rules

import (
	"fmt"

	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "irq-affinity-moving", Section: "network", Severity: doctor.Medium,
		Title:  "NIC queue interrupts move between CPUs while doctor watches",
		Why:    irqbalanceRewrites + ": a queue IRQ that moves takes its cache-warm softirq work to another CPU, and pins do not stay",
		Source: "K-scal; KP (stop and disable irqbalance); /proc/interrupts and /proc/irq/N/smp_affinity_list read twice (--sample)",
		Reads:  []string{"interrupts", "irq", "nics", "irqbalance"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/irq/N/smp_affinity_list and /proc/interrupts of * queue IRQs, read * apart"},
		Check:  withInferred(checkIRQMoving),
	})
}

// movedIRQ is a queue IRQ that changed CPUs in the sample window, and how
// that shows.
type movedIRQ struct {
	irq int
	ev  doctor.Evidence
}

func checkIRQMoving(f *doctor.Facts) doctor.Result {
	if f.Prev == nil {
		return doctor.Unchecked("one reading cannot show IRQs moving: run with --sample 15s (longer than irqbalance's 10 s rebalancing interval)")
	}
	var moved []movedIRQ
	watched := 0
	for _, n := range f.TargetNICs() {
		for _, q := range n.QueueIRQs {
			cur, prev := f.Host.Interrupts.IRQ(q.IRQ), f.Prev.Interrupts.IRQ(q.IRQ)
			if cur == nil || prev == nil {
				continue
			}
			watched++
			if m, ok := irqMoved(f, n, q, cur, prev); ok {
				moved = append(moved, m)
			}
		}
	}
	if watched == 0 {
		return doctor.Skip("no NIC queue IRQ in both readings")
	}
	ib := f.Host.Irqbalance
	if len(moved) == 0 {
		return doctor.Pass("%d queue IRQs kept their CPUs for %s", watched, f.Interval).
			With(doctor.Ev(fmt.Sprintf("/proc/irq/N/smp_affinity_list and /proc/interrupts of %d queue IRQs, read %s apart", watched, f.Interval), "unchanged"))
	}
	var irqs []int
	var evs []doctor.Evidence
	for _, m := range moved {
		irqs = append(irqs, m.irq)
		if len(evs) < 8 {
			evs = append(evs, m.ev)
		}
	}
	who := "something (irqbalance is not running: tuned, a script, a daemon)"
	fix := &doctor.Fix{Advice: []string{"find what rewrites /proc/irq/N/smp_affinity and stop it before pinning"}}
	if ib.ProcessesSeen == 0 && !ib.Running {
		// no process list (a capture): whether irqbalance runs is unknown
		who = "something (irqbalance, tuned, a script: the snapshot has no process list to tell)"
	}
	if ib.Running {
		who = "irqbalance"
		fix = stopIrqbalanceFix(ib, irqs)
		evs = append(evs, doctor.Ev("irqbalance pids", joinInts(ib.PIDs)))
	}
	return doctor.Fire("%d of %d queue IRQs changed CPUs within %s: %s moves them", len(moved), watched, f.Interval, who).With(evs...).WithFix(fix)
}

// irqMoved reports an IRQ whose affinity changed between the readings, or
// whose interrupts in the window went to CPUs outside the one CPU it is
// delivered to at both ends (it moved and came back).
func irqMoved(f *doctor.Facts, n *host.NIC, q host.QueueIRQ, cur, prev *host.IRQ) (movedIRQ, bool) {
	who := queueName(n, q)
	src := fmt.Sprintf("/proc/irq/%d/smp_affinity_list (%s)", cur.Number, who)
	if a, b := setText(prev.Affinity), setText(cur.Affinity); a != b {
		return movedIRQ{cur.Number, doctor.Evidence{Source: src, Value: b, Note: fmt.Sprintf("%s %s earlier", a, f.Interval)}}, true
	}
	if a, b := setText(prev.Effective), setText(cur.Effective); a != b {
		return movedIRQ{cur.Number, doctor.Evidence{Source: fmt.Sprintf("/proc/irq/%d/effective_affinity_list (%s)", cur.Number, who), Value: b, Note: fmt.Sprintf("%s %s earlier", a, f.Interval)}}, true
	}
	pinned, _, ok := irqCPUs(cur)
	if !ok {
		return countsMoved(f, who, cur, prev)
	}
	if pinned.Len() != 1 {
		return movedIRQ{}, false
	}
	counts, _, ok := irqCounts(f, cur.Number)
	if !ok {
		return movedIRQ{}, false
	}
	var total, outside uint64
	for cpu, c := range counts {
		total += c
		if !pinned.Contains(cpu) {
			outside += c
		}
	}
	if outside == 0 {
		return movedIRQ{}, false
	}
	return movedIRQ{cur.Number, doctor.Evidence{Source: fmt.Sprintf("/proc/interrupts IRQ %d (%s)", cur.Number, who),
		Value: host.CPUShares(counts, total, 3), Note: fmt.Sprintf("in the last %s, though it is delivered to CPU %s at both readings", f.Interval, pinned.List())}}, true
}

func setText(s *host.CPUSet) string {
	if s == nil {
		return "absent"
	}
	return s.List()
}

// queueName is "IF queue N" (or "IF, no queue" for a vector that serves
// none).
func queueName(n *host.NIC, q host.QueueIRQ) string {
	if q.NoQueue {
		return n.Name + ", no queue"
	}
	return fmt.Sprintf("%s queue %d", n.Name, q.Queue)
}

// countsMoved judges an IRQ whose affinity files the tree lacks by its
// counts alone: it moved when most of its interrupts in the window (at
// least minIRQs) went to another CPU than most of its interrupts before
// the window (the first reading's totals).
func countsMoved(f *doctor.Facts, who string, cur, prev *host.IRQ) (movedIRQ, bool) {
	window, _, ok := irqCounts(f, cur.Number)
	before := f.Prev.Interrupts.CountsByCPU(prev)
	var wt, bt uint64
	for _, c := range window {
		wt += c
	}
	for _, c := range before {
		bt += c
	}
	if !ok || wt < minIRQs || bt == 0 {
		return movedIRQ{}, false
	}
	now, was := host.HotCPUs(window, wt, 0)[0], host.HotCPUs(before, bt, 0)[0]
	if now == was {
		return movedIRQ{}, false
	}
	return movedIRQ{cur.Number, doctor.Evidence{Source: fmt.Sprintf("/proc/interrupts IRQ %d (%s)", cur.Number, who),
		Value: host.CPUShares(window, wt, 3),
		Note:  fmt.Sprintf("%d interrupts in the last %s, mostly on CPU %d; before the window CPU %d took most of them (%s): moved from CPU %d to CPU %d", wt, f.Interval, now, was, host.CPUShares(before, bt, 2), was, now)}}, true
}
