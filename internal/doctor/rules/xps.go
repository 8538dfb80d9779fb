package rules

import (
	"fmt"
	"strings"

	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/host"
	"redline/internal/placement"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "xps", Section: "network", Severity: doctor.Low,
		Title:  "Transmit queues are not mapped to the NIC's CPUs",
		Why:    "XPS picks the TX queue by the sending CPU; with empty or cross-node maps, replies leave through queues whose completions land on other nodes",
		Source: "K-scal (XPS: map each CPU to one TX queue); W (xps_cpus set per queue)",
		Reads:  []string{"nics"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/sys/class/net/*/queues/tx-*/xps_cpus"},
		Check:  checkXPS,
	})
}

func checkXPS(f *doctor.Facts) doctor.Result {
	var evs []doctor.Evidence
	var t nicTally
	for _, n := range f.TargetNICs() {
		tx, local, ok := xpsInputs(f, n, &t)
		if !ok {
			continue
		}
		var bad []host.TxQueue
		for _, q := range tx {
			if q.XPSCPUs.IsEmpty() || !q.XPSCPUs.IsSubsetOf(local) {
				bad = append(bad, q)
			}
		}
		if len(bad) > 0 {
			return doctor.Fire("%d of %d TX queues of %s have empty or off-node XPS maps", len(bad), len(tx), n.Name).
				With(doctor.Ev(fmt.Sprintf("/sys/class/net/%s/queues/tx-%d/xps_cpus", n.Name, bad[0].Index), orDefault(bad[0].XPSCPUs.List(), "empty"))).
				WithFix(xpsFix(f, n, tx))
		}
		t.check(n)
		for _, q := range tx {
			evs = append(evs, doctor.Ev(fmt.Sprintf("/sys/class/net/%s/queues/tx-%d/xps_cpus", n.Name, q.Index), q.XPSCPUs.List()))
		}
	}
	pass := doctor.Pass("every TX queue of %s has a local XPS map", strings.Join(t.checked, ", ")).With(evs...)
	return t.result(pass, "no NIC carrying Redis traffic")
}

// xpsInputs returns the TX queues of n whose XPS map was read and the
// CPUs local to n, or tallies n as not checked (or not applicable) and
// why.
func xpsInputs(f *doctor.Facts, n *host.NIC, t *nicTally) ([]host.TxQueue, host.CPUSet, bool) {
	tx := usableTx(n)
	switch {
	case len(n.TxQueues) == 0:
		t.notChecked(n, "no queues/tx-* under /sys/class/net/%s%s", n.Name, inThisTree(f))
	case len(n.TxQueues) == 1:
		t.notApplicable(n, "one TX queue")
	case len(tx) < 2 && xpsAbsent(n):
		t.notChecked(n, "no readable xps_cpus under its queues/tx-*%s", inThisTree(f))
	case len(tx) < 2:
		t.notApplicable(n, "its queues have no XPS (kernel without CONFIG_XPS)")
	default:
		local, ok := nicNodeCPUs(f, n)
		if !ok {
			local = f.OnlineCPUs()
		}
		if local.IsEmpty() {
			t.notChecked(n, "the CPUs local to it are unknown: no NUMA node, no local_cpulist and no /sys/devices/system/cpu/online%s", inThisTree(f))
			return nil, local, false
		}
		return tx, local, true
	}
	return nil, host.CPUSet{}, false
}

// xpsAbsent reports TX queues whose xps_cpus the snapshot lacks (not
// refused by the kernel: absent from the tree).
func xpsAbsent(n *host.NIC) bool {
	for _, q := range n.TxQueues {
		if q.XPSCPUs == nil && !q.XPSUnsupported {
			return true
		}
	}
	return false
}

func usableTx(n *host.NIC) []host.TxQueue {
	var out []host.TxQueue
	for _, q := range n.TxQueues {
		if !q.XPSUnsupported && q.XPSCPUs != nil {
			out = append(out, q)
		}
	}
	return out
}

// xpsFix writes the maps placement.XPS computes, the same maps tune's
// rps-xps profile writes: each local CPU sends on the queue whose IRQs
// the queue IRQ fixes place on it or its core.
func xpsFix(f *doctor.Facts, n *host.NIC, tx []host.TxQueue) *doctor.Fix {
	fix := new(doctor.Fix)
	m, ok := placement.XPS(placementInput(f, n, nil))
	if !ok {
		fix.Advice = append(fix.Advice, "no XPS map to propose: no CPU known to map")
		return fix
	}
	fix.Advice = append(fix.Advice, m.Notes...)
	for _, q := range tx {
		set, ok := m.Maps[q.Index]
		if !ok || set.Equal(*q.XPSCPUs) {
			continue
		}
		fix.Set(change.KindFile, fmt.Sprintf("/sys/class/net/%s/queues/tx-%d/xps_cpus", n.Name, q.Index), set.Mask(), orDefault(q.XPSCPUs.Mask(), "0"), fmt.Sprintf("tx-%d is sent on from CPUs %s", q.Index, set.List()))
	}
	return fix
}
