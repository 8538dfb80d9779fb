package rules

import (
	"fmt"
	"sort"
	"strings"

	"redline/internal/doctor"
	"redline/internal/host"
)

// minIRQs is the fewest interrupts of a NIC's queues (or of one queue)
// worth judging: below it a since-boot count or a quiet sample window
// says nothing about where traffic goes.
const minIRQs = 100

// queueLoad is where one queue's interrupts (its rx and tx IRQs together)
// were delivered, per CPU, from /proc/interrupts.
type queueLoad struct {
	Queue int
	IRQs  []host.QueueIRQ
	ByCPU map[int]uint64
	Total uint64
}

// nicLoads returns the interrupts of each of n's queues per CPU. With two
// samples (--sample) these are how much each count rose in the window and
// nothing else: an IRQ without a rate (see irqCounts) is left out, and
// left says which and why; with one sample, the totals since boot
// (sampled says which). A figure never adds a total to a rate. IRQs that
// serve no queue are left out.
func nicLoads(f *doctor.Facts, n *host.NIC) (loads []queueLoad, sampled bool, left []string) {
	byQueue := map[int]*queueLoad{}
	for _, q := range n.QueueIRQs {
		if q.NoQueue {
			continue
		}
		counts, why, ok := irqCounts(f, q.IRQ)
		if !ok {
			if why != "" {
				left = append(left, why)
			}
			continue
		}
		l := byQueue[q.Queue]
		if l == nil {
			l = &queueLoad{Queue: q.Queue, ByCPU: map[int]uint64{}}
			byQueue[q.Queue] = l
		}
		l.IRQs = append(l.IRQs, q)
		for cpu, c := range counts {
			l.ByCPU[cpu] += c
			l.Total += c
		}
	}
	for _, l := range byQueue {
		loads = append(loads, *l)
	}
	sort.Slice(loads, func(a, b int) bool { return loads[a].Queue < loads[b].Queue })
	return loads, f.Prev != nil, left
}

// irqCounts returns IRQ number n's interrupts per CPU: with an earlier
// sample, how much each count rose since it, else the totals since boot.
// With an earlier sample an IRQ has no rate when that sample lacks it or
// one of its CPU columns, or a count fell (the IRQ was freed and requested
// again): ok is false and why says so, rather than passing a total off as
// a rate.
func irqCounts(f *doctor.Facts, n int) (counts map[int]uint64, why string, ok bool) {
	irq := f.Host.Interrupts.IRQ(n)
	if irq == nil || len(irq.Counts) == 0 {
		return nil, "", false
	}
	counts = f.Host.Interrupts.CountsByCPU(irq)
	if f.Prev == nil {
		return counts, "", true
	}
	prev := f.Prev.Interrupts.IRQ(n)
	if prev == nil {
		return nil, fmt.Sprintf("IRQ %d is not in the first sample", n), false
	}
	before := f.Prev.Interrupts.CountsByCPU(prev)
	for cpu, c := range counts {
		p, had := before[cpu]
		switch {
		case !had:
			return nil, fmt.Sprintf("IRQ %d has no CPU%d count in the first sample", n, cpu), false
		case c < p:
			return nil, fmt.Sprintf("IRQ %d's count on CPU%d fell between the samples (freed and requested again)", n, cpu), false
		}
		counts[cpu] = c - p
	}
	return counts, "", true
}

// noRate adds to so far why n has no queue IRQ with a rate (none when
// nothing was left out: n has no counted queue IRQ at all).
func noRate(n *host.NIC, left []string, soFar string) string {
	if len(left) == 0 {
		return soFar
	}
	why := fmt.Sprintf("no queue IRQ of %s has a rate over the sample window: %s", n.Name, strings.Join(left, "; "))
	if soFar == "" {
		return why
	}
	return soFar + "; " + why
}

// leftEv is the evidence naming the IRQs left out of a NIC's rates.
func leftEv(n *host.NIC, left []string) []doctor.Evidence {
	if len(left) == 0 {
		return nil
	}
	return []doctor.Evidence{{Source: fmt.Sprintf("/proc/interrupts %s queue IRQs without a rate", n.Name), Value: strings.Join(left, "; "),
		Note: "left out: a rate needs the IRQ's counts in both samples, and a total is not a rate"}}
}

// sumLoads adds the queues' per-CPU counts.
func sumLoads(loads []queueLoad) (map[int]uint64, uint64) {
	by := map[int]uint64{}
	var total uint64
	for _, l := range loads {
		for cpu, c := range l.ByCPU {
			by[cpu] += c
		}
		total += l.Total
	}
	return by, total
}

// busiestCPU is the CPU that received most of a queue's interrupts.
func busiestCPU(l queueLoad) int {
	return host.HotCPUs(l.ByCPU, l.Total, 0)[0]
}

// irqCPUUniverse returns the CPUs interrupts may go to, with where that
// came from: the online CPUs, else the CPU columns of /proc/interrupts
// (which are the online CPUs when it was read).
func irqCPUUniverse(f *doctor.Facts) (host.CPUSet, doctor.Evidence) {
	if f.Host.CPU.Online != nil {
		return *f.Host.CPU.Online, doctor.Ev("/sys/devices/system/cpu/online", f.Host.CPU.Online.List())
	}
	set := host.NewCPUSet(f.Host.Interrupts.CPUs...)
	return set, doctor.Ev("/proc/interrupts CPU columns", set.List())
}

// loadEv is the evidence of one queue's delivery: its IRQs and the CPUs
// that took its interrupts, with the window.
func loadEv(f *doctor.Facts, n *host.NIC, l queueLoad, sampled bool) doctor.Evidence {
	irqs := make([]string, len(l.IRQs))
	for i, q := range l.IRQs {
		irqs[i] = fmt.Sprint(q.IRQ)
	}
	return doctor.Evidence{
		Source: fmt.Sprintf("/proc/interrupts IRQ %s (%s queue %d)", strings.Join(irqs, ","), n.Name, l.Queue),
		Value:  host.CPUShares(l.ByCPU, l.Total, 3),
		Note:   countWindow(f, sampled, l.Total),
	}
}

// countWindow says how many interrupts over which window.
func countWindow(f *doctor.Facts, sampled bool, total uint64) string {
	if sampled {
		return fmt.Sprintf("%d interrupts in the last %s", total, f.Interval)
	}
	return fmt.Sprintf("%d interrupts since boot; --sample 5s judges the rate now", total)
}

func pct(part, total uint64) float64 {
	if total == 0 {
		return 0
	}
	return 100 * float64(part) / float64(total)
}
