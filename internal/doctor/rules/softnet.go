package rules

import (
	"fmt"

	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "softnet-drops", Section: "network", Severity: doctor.Medium,
		Title:  "Packets were dropped because a CPU's backlog was full",
		Why:    "softnet_stat's second column counts packets dropped when the per-CPU input queue (netdev_max_backlog) was full",
		Source: "K-src net/core/net-procfs.c softnet_seq_show; K-net netdev_max_backlog; K-scal (1000 or 10000 performed well)",
		Reads:  []string{"softnet_stat", "sysctls"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/net/softnet_stat dropped*"},
		Check:  checkSoftnetDrops,
	})
	doctor.Register(doctor.Rule{
		ID: "softnet-squeeze", Section: "network", Severity: doctor.Low,
		Title:  "Receive processing ran out of budget",
		Why:    "softnet_stat's third column counts NAPI rounds cut short by netdev_budget / netdev_budget_usecs with work left: packets wait for the next round",
		Source: "K-src net/core/net-procfs.c softnet_seq_show; K-net netdev_budget; KP (netdev_budget 600)",
		Reads:  []string{"softnet_stat", "sysctls"},
		Needs:  doctor.NeedHost,
		Proves: []string{"/proc/net/softnet_stat time_squeeze*"},
		Check:  checkSoftnetSqueeze,
	})
}

func softnetSum(s *host.Snapshot, col func(host.Softnet) uint64) (uint64, bool) {
	if s == nil || len(s.Softnet) == 0 {
		return 0, false
	}
	var n uint64
	for _, r := range s.Softnet {
		n += col(r)
	}
	return n, true
}

func checkSoftnetDrops(f *doctor.Facts) doctor.Result {
	d, sampled, ok := f.HostDelta(func(s *host.Snapshot) (uint64, bool) {
		return softnetSum(s, func(r host.Softnet) uint64 { return r.Dropped })
	})
	if !ok {
		return doctor.Skip("/proc/net/softnet_stat is not readable")
	}
	ev := doctor.Evidence{Source: "/proc/net/softnet_stat dropped (column 2)", Value: u64(d), Note: window(sampled, "since boot")}
	backlog, bev, _ := f.SysctlInt("net.core.netdev_max_backlog")
	if d == 0 {
		return doctor.Pass("no backlog drops").With(ev, bev)
	}
	r := doctor.Fire("%d packets dropped at full per-CPU backlogs %s", d, f.Since(sampled)).With(ev, bev)
	if backlog < 10000 {
		r = r.WithFix(new(doctor.Fix).Sysctl("net.core.netdev_max_backlog", "10000", bev.Value, "a longer per-CPU input queue"))
	}
	return r
}

func checkSoftnetSqueeze(f *doctor.Facts) doctor.Result {
	d, sampled, ok := f.HostDelta(func(s *host.Snapshot) (uint64, bool) {
		return softnetSum(s, func(r host.Softnet) uint64 { return r.TimeSqueeze })
	})
	if !ok {
		return doctor.Skip("/proc/net/softnet_stat is not readable")
	}
	ev := doctor.Evidence{Source: "/proc/net/softnet_stat time_squeeze (column 3)", Value: u64(d), Note: window(sampled, "since boot")}
	budget, bev, _ := f.SysctlInt("net.core.netdev_budget")
	if d == 0 {
		return doctor.Pass("no budget squeezes").With(ev, bev)
	}
	r := doctor.Fire("receive processing ran out of budget %d times %s", d, f.Since(sampled)).With(ev, bev)
	if budget < 600 {
		r = r.WithFix(new(doctor.Fix).Sysctl("net.core.netdev_budget", fmt.Sprint(600), bev.Value, "more packets per NAPI round (KP's value)"))
	}
	return r
}
