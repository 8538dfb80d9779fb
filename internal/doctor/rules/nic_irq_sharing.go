package rules

import (
	"fmt"
	"sort"
	"strings"

	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "nic-irq-sharing", Section: "network", Severity: doctor.Medium,
		Title:  "Queues of one NIC share a CPU while other CPUs are free",
		Why:    "two busy queues on one CPU serialise their softirq work there, so that CPU caps the NIC while CPUs that could take a queue idle; give each queue a core of its own",
		Source: "K-scal (one queue IRQ per CPU); KP 2.7 (one core per queue IRQ); /proc/interrupts per-CPU counts",
		Reads:  []string{"interrupts", "irq", "nics"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/interrupts * busiest CPU per queue"},
		Check:  withInferred(checkIRQSharing),
	})
}

func checkIRQSharing(f *doctor.Facts) doctor.Result {
	universe, uev := irqCPUUniverse(f)
	var evs []doctor.Evidence
	var fired nicFindings
	quiet, unrated := "", ""
	for _, n := range f.TargetNICs() {
		loads, sampled, left := nicLoads(f, n)
		by, total := sumLoads(loads)
		if len(loads) == 0 {
			unrated = noRate(n, left, unrated)
		}
		if len(loads) < 2 {
			continue
		}
		if total < minIRQs {
			quiet = fmt.Sprintf("%s's queues took %s", n.Name, countWindow(f, sampled, total))
			continue
		}
		limit := freeLimit(total, len(loads))
		shared := sharedCPUs(loads, limit)
		cands, cev := sharingCandidates(f, n, universe, uev)
		idle := idleCPUs(cands, by, otherHeavy(f, n, limit), limit)
		if cpu, qs, ok := busiestShared(shared, loads); ok && len(idle) > 0 {
			r := fireSharing(f, n, loads, cpu, qs, idle, limit, sampled, cev)
			fired.add(r.With(leftEv(n, left)...))
			continue
		}
		evs = append(evs, doctor.Evidence{Source: fmt.Sprintf("/proc/interrupts %s busiest CPU per queue", n.Name), Value: busiestText(loads, limit),
			Note: countWindow(f, sampled, total) + fmt.Sprintf("; light: under %d, a tenth of one queue's even share", limit)})
		evs = append(evs, leftEv(n, left)...)
	}
	if r, ok := fired.result(); ok {
		return r
	}
	switch {
	case len(evs) > 0:
		return doctor.Pass("no two busy queues share a CPU while another CPU is free (under a tenth of one queue's even share of the NIC's interrupts, and no heavy other IRQ)").With(append(evs, uev)...)
	case quiet != "":
		return doctor.Unchecked("too few interrupts to judge: %s", quiet)
	case unrated != "":
		return doctor.Unchecked("%s", unrated)
	}
	return doctor.Skip("no NIC with 2 or more queues whose IRQs /proc/interrupts counts")
}

// sharedCPUs maps each CPU that is the busiest of 2 or more busy queues
// to those queues. A queue is busy when it took limit or more (and some)
// interrupts: a queue under a tenth of its even share costs its CPU
// nothing worth moving.
func sharedCPUs(loads []queueLoad, limit uint64) map[int][]int {
	by := map[int][]int{}
	for _, l := range loads {
		if l.Total > 0 && l.Total >= limit {
			c := busiestCPU(l)
			by[c] = append(by[c], l.Queue)
		}
	}
	for c, qs := range by {
		if len(qs) < 2 {
			delete(by, c)
		}
	}
	return by
}

// busiestShared is the shared CPU whose queues took the most interrupts.
func busiestShared(shared map[int][]int, loads []queueLoad) (cpu int, queues []int, ok bool) {
	var best uint64
	for c, qs := range shared {
		var sum uint64
		for _, l := range loads {
			if contains(qs, l.Queue) {
				sum += l.Total
			}
		}
		if !ok || sum > best || sum == best && c < cpu {
			cpu, queues, best, ok = c, qs, sum, true
		}
	}
	sort.Ints(queues)
	return cpu, queues, ok
}

// sharingCandidates are the CPUs a queue could move to: the NIC's local
// CPUs when known, else every CPU.
func sharingCandidates(f *doctor.Facts, n *host.NIC, universe host.CPUSet, uev doctor.Evidence) (host.CPUSet, doctor.Evidence) {
	if local, ok := nicNodeCPUs(f, n); ok {
		return local.Intersect(universe), doctor.Ev("/sys/class/net/"+n.Name+"/device/local_cpulist", local.List())
	}
	return universe, uev
}

// freeShareOfQueue is the fraction of one queue's even share (the NIC's
// queue interrupts divided by its queues) below which a CPU counts as
// free: a CPU that took less than a tenth of what one queue averages
// hosts no queue, only stray interrupts (azure-mana-4cpu's CPU 1 took 114
// of 13.8 million while its 4 queues sat on 3 CPUs; netutils-mlx5-q6700's
// CPUs 1-3 took about 1% each while all 4 vectors were ~96% on CPU 0).
const freeShareOfQueue = 0.1

// freeLimit is the count below which a CPU counts as free of a NIC whose
// queues took total interrupts.
func freeLimit(total uint64, queues int) uint64 {
	return uint64(freeShareOfQueue * float64(total) / float64(queues))
}

// otherHeavy maps each CPU to the IRQ lines other than n's queue IRQs
// that delivered limit or more interrupts to it (in the same window as
// the queues' counts): a CPU busy with another device is not free.
func otherHeavy(f *doctor.Facts, n *host.NIC, limit uint64) map[int][]int {
	mine := map[int]bool{}
	for _, q := range n.QueueIRQs {
		if !q.NoQueue {
			mine[q.IRQ] = true
		}
	}
	out := map[int][]int{}
	for _, irq := range f.Host.Interrupts.IRQs {
		if mine[irq.Number] {
			continue
		}
		counts, _, ok := irqCounts(f, irq.Number)
		if !ok {
			continue
		}
		for cpu, c := range counts {
			if c >= limit && c > 0 {
				out[cpu] = append(out[cpu], irq.Number)
			}
		}
	}
	return out
}

// idleCPUs are the candidates that took fewer than limit of the NIC's
// queue interrupts and no heavy interrupt of another IRQ.
func idleCPUs(cands host.CPUSet, by map[int]uint64, heavy map[int][]int, limit uint64) []int {
	var out []int
	for _, c := range cands.CPUs() {
		if (by[c] < limit || by[c] == 0) && len(heavy[c]) == 0 {
			out = append(out, c)
		}
	}
	return out
}

func busiestText(loads []queueLoad, limit uint64) string {
	s := ""
	for i, l := range loads {
		if i == 16 {
			s += " ..."
			break
		}
		if i > 0 {
			s += ", "
		}
		if l.Total == 0 {
			s += fmt.Sprintf("q%d none", l.Queue)
			continue
		}
		s += fmt.Sprintf("q%d CPU%d", l.Queue, busiestCPU(l))
		if l.Total < limit {
			s += " light"
		}
	}
	return s
}

func fireSharing(f *doctor.Facts, n *host.NIC, loads []queueLoad, cpu int, qs, idle []int, limit uint64, sampled bool, cev doctor.Evidence) doctor.Result {
	by, total := sumLoads(loads)
	var shared uint64
	evs := []doctor.Evidence{}
	for _, l := range loads {
		if contains(qs, l.Queue) {
			shared += l.Total
			evs = append(evs, loadEv(f, n, l, sampled))
		}
	}
	evs = append(evs, cev, doctor.Evidence{Source: fmt.Sprintf("CPUs free of %s's queue interrupts", n.Name), Value: host.NewCPUSet(idle...).List(),
		Note: fmt.Sprintf("free: fewer than %d interrupts (a tenth of one queue's even share of %d over %d queues) of the NIC's queues and of any other IRQ", limit, total, len(loads))})
	fix := irqPlacementFix(f, n, nil)
	fix.Advice = append(fix.Advice, "stop irqbalance first or exclude these IRQs (see irqbalance-pinning)")
	return doctor.Fire("queues %s of %s share CPU %d (%.0f%% of its queue interrupts) while %d CPU(s) are free (%s)", joinInts(qs), n.Name, cpu, pct(shared, total), len(idle), freeText(idle, by, total)).
		With(evs...).WithFix(fix)
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// freeText says what the free CPUs took of the NIC's queue interrupts
// ("CPU 1 took 114 (<0.1%)"), the first 4.
func freeText(idle []int, by map[int]uint64, total uint64) string {
	if sumOn(by, idle) == 0 {
		return "CPU " + host.NewCPUSet(idle...).List() + " took none"
	}
	var parts []string
	for i, c := range idle {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("%d more", len(idle)-4))
			break
		}
		p := fmt.Sprintf("%.1f%%", pct(by[c], total))
		if pct(by[c], total) < 0.1 {
			p = "<0.1%"
		}
		if by[c] == 0 {
			parts = append(parts, fmt.Sprintf("CPU %d took none", c))
			continue
		}
		parts = append(parts, fmt.Sprintf("CPU %d took %d (%s)", c, by[c], p))
	}
	return strings.Join(parts, ", ")
}
