package rules

import (
	"fmt"

	"redline/internal/change"
	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "rps", Section: "network", Severity: doctor.Medium,
		Title:  "One CPU does all receive processing and RPS is off",
		Why:    "with fewer RX queues than CPUs, RPS spreads protocol processing to other CPUs of the same node; without it one CPU saturates in softirq. With one RSS queue per CPU, RPS only adds overhead",
		Source: "K-scal (RPS); RD-bench (queue affinity plus RPS); redis/redis#5882 (RPS did not help in one case: measure)",
		Reads:  []string{"nics", "softirqs", "cpu"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/sys/class/net/*/queues/rx-*/rps_cpus", "/proc/softirqs NET_RX*"},
		Check:  checkRPS,
	})
}

func checkRPS(f *doctor.Facts) doctor.Result {
	if f.Host.CPU.Online == nil {
		return doctor.Unchecked("the online CPUs are unknown (/sys/devices/system/cpu/online absent from this tree)")
	}
	online := f.OnlineCPUs().Len()
	if online < 2 {
		return doctor.Skip("one CPU: nothing to spread to")
	}
	hot, share, total := hottestNetRx(f)
	var evs []doctor.Evidence
	for _, n := range f.TargetNICs() {
		rx := usableRx(n)
		if len(rx) == 0 {
			continue
		}
		set := rpsSet(n)
		sev := doctor.Ev(fmt.Sprintf("/sys/class/net/%s/queues/rx-*/rps_cpus", n.Name), orDefault(set, "0 (off)"))
		switch {
		case len(rx) < online && set == "" && total > 0 && share >= 0.9:
			return doctor.Fire("%s has %d RX queue(s), RPS is off and CPU %d handles %.0f%% of NET_RX softirqs", n.Name, len(rx), hot, share*100).
				With(sev, doctor.Ev(fmt.Sprintf("/proc/softirqs NET_RX CPU %d", hot), fmt.Sprintf("%.0f%% of %d", share*100, total))).
				WithFix(rpsFix(f, n, rx, hot))
		case len(rx) >= online && set != "":
			return doctor.Fire("%s has one RX queue per CPU (%d) and RPS set too", n.Name, len(rx)).With(sev).
				WithSeverity(doctor.Low).WithFix(rpsOffFix(n, rx))
		}
		evs = append(evs, sev)
	}
	switch {
	case len(evs) == 0:
		return doctor.Unchecked("no NIC's rps_cpus is in this tree")
	case f.Host.Softirqs == nil:
		return doctor.Unchecked("/proc/softirqs is absent from this tree: which CPU receives is unknown")
	case total == 0:
		return doctor.Unchecked("/proc/softirqs counts no NET_RX softirq %s", f.Since(f.Prev != nil))
	}
	return doctor.Pass("receive processing is spread (hottest CPU %d: %.0f%% of NET_RX)", hot, share*100).
		With(append(evs, doctor.Evidence{Source: fmt.Sprintf("/proc/softirqs NET_RX CPU %d", hot), Value: fmt.Sprintf("%.0f%% of %d", share*100, total), Note: window(f.Prev != nil, "since boot")})...)
}

func usableRx(n *host.NIC) []host.RxQueue {
	var out []host.RxQueue
	for _, q := range n.RxQueues {
		if !q.RPSUnsupported && q.RPSCPUs != nil {
			out = append(out, q)
		}
	}
	return out
}

// rpsSet returns the non-empty rps_cpus lists, or "".
func rpsSet(n *host.NIC) string {
	s := ""
	for _, q := range usableRx(n) {
		if !q.RPSCPUs.IsEmpty() {
			s += fmt.Sprintf("rx-%d=%s ", q.Index, q.RPSCPUs.List())
		}
	}
	return s
}

func rpsFix(f *doctor.Facts, n *host.NIC, rx []host.RxQueue, hot int) *doctor.Fix {
	cpus, ok := nicNodeCPUs(f, n)
	if !ok {
		cpus = f.OnlineCPUs()
	}
	if cpus.Len() > 1 {
		cpus.Remove(hot) // the IRQ CPU already does its share
	}
	fix := new(doctor.Fix)
	for _, q := range rx {
		fix.Set(change.KindFile, fmt.Sprintf("/sys/class/net/%s/queues/rx-%d/rps_cpus", n.Name, q.Index), cpus.Mask(), q.RPSCPUs.Mask(), "spread receive processing over the NIC's node")
	}
	fix.Advice = []string{"turn on RFS too (see rfs) so packets are processed on the CPU of the thread that reads them"}
	return fix
}

func rpsOffFix(n *host.NIC, rx []host.RxQueue) *doctor.Fix {
	fix := new(doctor.Fix)
	for _, q := range rx {
		fix.Set(change.KindFile, fmt.Sprintf("/sys/class/net/%s/queues/rx-%d/rps_cpus", n.Name, q.Index), "0", q.RPSCPUs.Mask(), "RSS already spreads the queues")
	}
	return fix
}
