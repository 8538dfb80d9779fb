package rules

import (
	"fmt"
	"strings"

	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "nic-queue-count", Section: "network", Severity: doctor.Medium,
		Title:  "The NIC's queue count does not match the cores that serve it",
		Why:    "for low latency use one queue per physical core of the NIC's node (hyper-threads \"have shown no benefit\"); too few queues put all packets on a few CPUs, too many spread them over cores that also run Redis",
		Source: "K-scal (RSS queue count); KP (16 queues, one per core); W (64 host queues, 16 in the containers)",
		Reads:  []string{"nics", "softirqs"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/sys/class/net/*/queues rx-*|ethtool -l *", "physical cores *"},
		Check:  withInferred(checkQueueCount),
	})
}

func checkQueueCount(f *doctor.Facts) doctor.Result {
	var t nicTally
	var evs []doctor.Evidence
	for _, n := range f.TargetNICs() {
		q, maxq, ev, ok := queueCount(n)
		if !ok {
			t.notChecked(n, "no ethtool -l answer and no queues/rx-* under /sys/class/net/%s%s", n.Name, inThisTree(f))
			continue
		}
		cores, cev := nodeCores(f, n)
		if cores == 0 {
			t.notChecked(n, "its queue count is known but not the cores that serve it: no CPU topology under /sys/devices/system/cpu%s", inThisTree(f))
			continue
		}
		if r, fired := judgeQueues(f, n, q, maxq, cores, ev, cev); fired {
			return r
		}
		t.check(n)
		evs = append(evs, ev, cev)
	}
	pass := doctor.Pass("queue counts of %s fit their cores", strings.Join(t.checked, ", ")).With(evs...)
	return t.result(pass, "no NIC carrying Redis traffic")
}

// queueCount returns the NIC's channel count and maximum (0 when unknown).
func queueCount(n *host.NIC) (q, maxq int, ev doctor.Evidence, ok bool) {
	if et := n.Ethtool; et != nil && et.Channels != nil {
		c := et.Channels
		q, maxq = int(c.Combined+c.Rx), int(c.MaxCombined+c.MaxRx)
		return q, maxq, doctor.Ev("ethtool -l "+n.Name, fmt.Sprintf("%d of max %d", q, maxq)), q > 0
	}
	if len(n.RxQueues) == 0 {
		return 0, 0, doctor.Evidence{}, false
	}
	return len(n.RxQueues), 0, doctor.Ev("/sys/class/net/"+n.Name+"/queues rx-*", len(n.RxQueues)), true
}

// nodeCores counts the physical cores local to the NIC (all online CPUs
// when its node is unknown).
func nodeCores(f *doctor.Facts, n *host.NIC) (int, doctor.Evidence) {
	cpus, ok := nicNodeCPUs(f, n)
	where := "the NIC's node"
	if !ok {
		cpus, where = f.OnlineCPUs(), "the host"
	}
	c := physicalCores(f, cpus)
	return c, doctor.Ev("physical cores of "+where+" (CPUs "+cpus.List()+")", c)
}

func judgeQueues(f *doctor.Facts, n *host.NIC, q, maxq, cores int, ev, cev doctor.Evidence) (doctor.Result, bool) {
	want := cores
	if maxq > 0 {
		want = min(maxq, cores)
	}
	hot, share, total := hottestNetRx(f)
	switch {
	case q > cores && cores > 0:
		return doctor.Fire("%s has %d queues for %d physical cores", n.Name, q, cores).With(ev, cev).WithFix(channelsFix(n, cores, q, maxq)), true
	case q < want && total > 0 && share >= 0.9 && f.OnlineCPUs().Len() > 1:
		return doctor.Fire("%s has %d queue(s) while %d cores could serve it, and CPU %d handles %.0f%% of NET_RX", n.Name, q, want, hot, share*100).
			With(ev, cev, doctor.Ev("/proc/softirqs NET_RX CPU "+fmt.Sprint(hot), fmt.Sprintf("%.0f%%", share*100))).WithFix(channelsFix(n, want, q, maxq)), true
	}
	return doctor.Result{}, false
}

func channelsFix(n *host.NIC, want, old, maxq int) *doctor.Fix {
	if maxq == 0 {
		return &doctor.Fix{NeedsRoot: true, Advice: []string{fmt.Sprintf("ethtool -L %s combined %d (check ethtool -l %s for the maximum first)", n.Name, want, n.Name)}}
	}
	fix := new(doctor.Fix).Set(change.KindChannels, n.Name, fmt.Sprint(want), fmt.Sprint(old), "one queue per physical core of the NIC's node")
	fix.Caution = "changing channels re-creates the NIC's queues: a short traffic interruption, and IRQ numbers and affinities change (re-run doctor afterwards)"
	return fix
}
