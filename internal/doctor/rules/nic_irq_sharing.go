package rules

import (
	"fmt"
	"sort"

	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "nic-irq-sharing", Section: "network", Severity: doctor.Medium,
		Title:  "Queues of one NIC share a CPU while other CPUs take none of its interrupts",
		Why:    "two busy queues on one CPU serialise their softirq work there, so that CPU caps the NIC while CPUs that could take a queue idle; give each queue a core of its own",
		Source: "K-scal (one queue IRQ per CPU); KP 2.7 (one core per queue IRQ); /proc/interrupts per-CPU counts",
		Reads:  []string{"interrupts", "irq", "nics"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/interrupts * busiest CPU per queue"},
		Check:  checkIRQSharing,
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
		shared := sharedCPUs(loads)
		cands, cev := sharingCandidates(f, n, universe, uev)
		idle := idleCPUs(cands, by)
		if cpu, qs, ok := busiestShared(shared, loads); ok && len(idle) > 0 {
			r := fireSharing(f, n, loads, cpu, qs, idle, sampled, cev)
			fired.add(r.With(leftEv(n, left)...))
			continue
		}
		evs = append(evs, doctor.Evidence{Source: fmt.Sprintf("/proc/interrupts %s busiest CPU per queue", n.Name), Value: busiestText(loads), Note: countWindow(f, sampled, total)})
		evs = append(evs, leftEv(n, left)...)
	}
	if r, ok := fired.result(); ok {
		return r
	}
	switch {
	case len(evs) > 0:
		return doctor.Pass("no two busy queues share a CPU while another CPU is free").With(append(evs, uev)...)
	case quiet != "":
		return doctor.Unchecked("too few interrupts to judge: %s", quiet)
	case unrated != "":
		return doctor.Unchecked("%s", unrated)
	}
	return doctor.Skip("no NIC with 2 or more queues whose IRQs /proc/interrupts counts")
}

// sharedCPUs maps each CPU that is the busiest of 2 or more queues that
// took interrupts to those queues.
func sharedCPUs(loads []queueLoad) map[int][]int {
	by := map[int][]int{}
	for _, l := range loads {
		if l.Total > 0 {
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

// idleCPUs are the candidates that took none of the NIC's queue
// interrupts.
func idleCPUs(cands host.CPUSet, by map[int]uint64) []int {
	var out []int
	for _, c := range cands.CPUs() {
		if by[c] == 0 {
			out = append(out, c)
		}
	}
	return out
}

func busiestText(loads []queueLoad) string {
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
	}
	return s
}

func fireSharing(f *doctor.Facts, n *host.NIC, loads []queueLoad, cpu int, qs, idle []int, sampled bool, cev doctor.Evidence) doctor.Result {
	_, total := sumLoads(loads)
	var shared uint64
	evs := []doctor.Evidence{}
	for _, l := range loads {
		if contains(qs, l.Queue) {
			shared += l.Total
			evs = append(evs, loadEv(f, n, l, sampled))
		}
	}
	evs = append(evs, cev, doctor.Ev(fmt.Sprintf("CPUs that took none of %s's queue interrupts", n.Name), host.NewCPUSet(idle...).List()))
	fix := irqPlacementFix(f, n, nil)
	fix.Advice = append(fix.Advice, "stop irqbalance first or exclude these IRQs (see irqbalance-pinning)")
	return doctor.Fire("queues %s of %s share CPU %d (%.0f%% of its queue interrupts) while %d CPU(s) take none", joinInts(qs), n.Name, cpu, pct(shared, total), len(idle)).
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
