package rules

import (
	"fmt"
	"strings"

	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "nic-irq-concentration", Section: "network", Severity: doctor.Medium,
		Title:  "A NIC's queue interrupts are delivered to few CPUs, or each queue's to many",
		Why:    "RSS spreads flows over queues so that several CPUs share receive work; when the queues' interrupts all land on one or two CPUs those CPUs saturate in softirq while the others idle, and when each queue's wander over many CPUs its flows lose their cache and RFS/XPS alignment",
		Source: "K-scal (RSS: one queue IRQ per CPU); KP 2.7 (one core per queue IRQ); /proc/interrupts per-CPU counts",
		Reads:  []string{"interrupts", "irq", "nics"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/interrupts * queue IRQs by CPU"},
		Check:  withInferred(checkIRQConcentration),
	})
}

// hotShare90 is the share of a NIC's queue interrupts whose CPUs are its
// hot CPUs.
const hotShare90 = 0.9

func checkIRQConcentration(f *doctor.Facts) doctor.Result {
	universe, uev := irqCPUUniverse(f)
	var evs []doctor.Evidence
	var fired nicFindings
	var skewed, spread []string
	quiet, single, unrated := "", "", ""
	for _, n := range f.TargetNICs() {
		loads, sampled, left := nicLoads(f, n)
		by, total := sumLoads(loads)
		want := min(len(loads), universe.Len())
		switch {
		case len(loads) == 0:
			unrated = noRate(n, left, unrated)
			continue
		case want < 2:
			single = fmt.Sprintf("%s has %d queue(s) with IRQs on %d CPU(s)", n.Name, len(loads), universe.Len())
			continue
		case total < minIRQs:
			quiet = fmt.Sprintf("%s's queues took %s", n.Name, countWindow(f, sampled, total))
			continue
		}
		hot := host.HotCPUs(by, total, hotShare90)
		ev := doctor.Evidence{Source: fmt.Sprintf("/proc/interrupts %s queue IRQs by CPU", n.Name), Value: host.CPUShares(by, total, 4), Note: countWindow(f, sampled, total)}
		if 2*len(hot) <= want {
			if q := queuesHomedOn(loads, hot); q <= len(hot) && silentQueues(loads) == 0 {
				// each hot CPU is one queue's own and every queue took
				// interrupts elsewhere: the traffic, not the IRQ
				// placement, is concentrated (a silent queue shows
				// nothing of where its IRQ goes: that still fires)
				skewed = append(skewed, fmt.Sprintf("%s: queue(s) %s took %.0f%% of its queue interrupts, each on a CPU of its own (CPU %s)", n.Name, joinInts(queuesOn(loads, hot)), pct(sumOn(by, hot), total), joinInts(hot)))
				spread = append(spread, spreadText(n, loads, by, total, hot))
				evs = append(append(evs, ev), leftEv(n, left)...)
				continue
			}
			fired.add(fireConcentration(f, n, loads, hot, want, universe, append(append([]doctor.Evidence{ev, uev}, queueEvs(f, n, loads, sampled)...), leftEv(n, left)...)))
			continue
		}
		if sc := scatteredQueues(loads, total); universe.Len() > scatterSet && len(sc) > 0 {
			fired.add(fireScattered(f, n, loads, sc, universe, append([]doctor.Evidence{ev, uev}, leftEv(n, left)...), sampled))
			continue
		}
		spread = append(spread, spreadText(n, loads, by, total, hot))
		evs = append(append(evs, ev), leftEv(n, left)...)
	}
	if r, ok := fired.result(); ok {
		return r
	}
	switch {
	case len(evs) > 0:
		r := doctor.Pass("%s", strings.Join(spread, "; ")).With(append(evs, uev)...)
		for _, s := range skewed {
			r = r.Note("%s: RSS sends most flows to few queues, which moving IRQs cannot change (ethtool -x shows the indirection table)", s)
		}
		return r
	case quiet != "":
		return doctor.Unchecked("too few interrupts to judge: %s", quiet)
	case unrated != "":
		return doctor.Unchecked("%s", unrated)
	case single != "":
		return doctor.Skip("%s: nothing to spread", single)
	}
	return doctor.Skip("no NIC with mapped queue IRQs that /proc/interrupts counts")
}

func fireConcentration(f *doctor.Facts, n *host.NIC, loads []queueLoad, hot []int, want int, universe host.CPUSet, evs []doctor.Evidence) doctor.Result {
	by, total := sumLoads(loads)
	var got uint64
	for _, c := range hot {
		got += by[c]
	}
	silent := 0
	for _, l := range loads {
		if l.Total == 0 {
			silent++
		}
	}
	fix := irqPlacementFix(f, n, nil)
	if silent > 0 {
		fix.Advice = append(fix.Advice, fmt.Sprintf("%d of %d queues took no interrupt: check that RSS spreads flows over them (ethtool -x %s); pinning IRQs cannot move traffic a queue does not get", silent, len(loads), n.Name))
	}
	fix.Advice = append(fix.Advice, "stop irqbalance first or exclude these IRQs (see irqbalance-pinning)")
	r := doctor.Fire("%.0f%% of the interrupts of %s's %d queues went to CPU %s, %d of the %d CPUs", pct(got, total), n.Name, len(loads), joinInts(hot), len(hot), universe.Len()).
		With(evs...).WithFix(fix)
	if silent > 0 {
		r = r.Note("%d queue(s) took no interrupt at all", silent)
	}
	return r
}

// queueEvs is the delivery of the busiest queues (at most 8).
func queueEvs(f *doctor.Facts, n *host.NIC, loads []queueLoad, sampled bool) []doctor.Evidence {
	var evs []doctor.Evidence
	for _, l := range loads {
		if len(evs) == 8 {
			break
		}
		evs = append(evs, loadEv(f, n, l, sampled))
	}
	return evs
}

// queuesOn lists the queues whose busiest CPU is one of cpus.
func queuesOn(loads []queueLoad, cpus []int) []int {
	var out []int
	for _, l := range loads {
		if l.Total > 0 && contains(cpus, busiestCPU(l)) {
			out = append(out, l.Queue)
		}
	}
	return out
}

// queuesHomedOn counts the queues whose busiest CPU is one of cpus.
func queuesHomedOn(loads []queueLoad, cpus []int) int { return len(queuesOn(loads, cpus)) }

// sumOn is the interrupts delivered to cpus.
func sumOn(by map[int]uint64, cpus []int) uint64 {
	var n uint64
	for _, c := range cpus {
		n += by[c]
	}
	return n
}

// silentQueues counts the queues that took no interrupt.
func silentQueues(loads []queueLoad) int {
	n := 0
	for _, l := range loads {
		if l.Total == 0 {
			n++
		}
	}
	return n
}

// spreadText says what the counts of a NIC whose queue interrupts are not
// concentrated show: how many CPUs took 90% of them, for how many queues,
// and the most CPUs one queue needed.
func spreadText(n *host.NIC, loads []queueLoad, by map[int]uint64, total uint64, hot []int) string {
	return fmt.Sprintf("%.0f%% of the interrupts of %s's %d queues went to %d CPU(s) (CPU %s), 90%% of each queue's to at most %d CPU(s)",
		pct(sumOn(by, hot), total), n.Name, len(loads), len(hot), host.NewCPUSet(hot...).List(), mostQueueCPUs(loads))
}

// mostQueueCPUs is the most CPUs one queue needs for 90% of its
// interrupts.
func mostQueueCPUs(loads []queueLoad) int {
	most := 0
	for _, l := range loads {
		if l.Total > 0 {
			most = max(most, len(host.HotCPUs(l.ByCPU, l.Total, hotShare90)))
		}
	}
	return most
}

// scatterSet is the most CPUs a queue's interrupts may need for 90% of
// them and still count as delivered to one place: one CPU, or two (a
// core's hyperthreads, or one move of the IRQ in a since-boot total). A
// queue whose interrupts wander over more CPUs loses the cache and the
// RFS/XPS alignment of its flows (K-scal: each queue's IRQ on one CPU,
// XPS maps the CPUs that complete a queue's transmits).
const scatterSet = 2

// scatteredQueues are the queues, each with minIRQs or more and a tenth
// of one queue's even share or more, that needed more than scatterSet
// CPUs for 90% of their interrupts.
func scatteredQueues(loads []queueLoad, total uint64) []queueLoad {
	var out []queueLoad
	for _, l := range loads {
		if l.Total < minIRQs || l.Total < freeLimit(total, len(loads)) {
			continue
		}
		if len(host.HotCPUs(l.ByCPU, l.Total, hotShare90)) > scatterSet {
			out = append(out, l)
		}
	}
	return out
}

func fireScattered(f *doctor.Facts, n *host.NIC, loads, sc []queueLoad, universe host.CPUSet, evs []doctor.Evidence, sampled bool) doctor.Result {
	qs := make([]int, len(sc))
	most := 0
	for i, l := range sc {
		qs[i] = l.Queue
		most = max(most, len(host.HotCPUs(l.ByCPU, l.Total, hotShare90)))
		if i < 8 {
			evs = append(evs, loadEv(f, n, l, sampled))
		}
	}
	fix := irqPlacementFix(f, n, nil)
	fix.Advice = append(fix.Advice, "stop irqbalance first or exclude these IRQs (see irqbalance-pinning): a queue's interrupts spread over many CPUs are usually an IRQ moved again and again, or one whose affinity lets the kernel pick any CPU")
	return doctor.Fire("the interrupts of %d of %s's %d queues are spread: each needs %d or more CPUs (up to %d of the %d) for 90%% of them, not one CPU", len(sc), n.Name, len(loads), scatterSet+1, most, universe.Len()).
		With(evs...).WithFix(fix).Note("queues spread: %s (a queue counts as delivered to one place when 1 or %d CPUs took 90%% of its interrupts)", joinInts(qs), scatterSet)
}
