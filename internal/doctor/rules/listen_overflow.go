package rules

import (
	"redline/internal/doctor"
	"redline/internal/host"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "listen-overflow", Section: "tcp", Severity: doctor.High,
		Title:  "Accept queues overflowed",
		Why:    "a SYN or ACK that arrives at a full accept queue is dropped and counted in ListenOverflows/ListenDrops: clients wait for a retransmit (1 s, then 3 s)",
		Source: "K-snmp (ListenOverflows, ListenDrops)",
		Reads:  []string{"netstat"},
		Needs:  doctor.NeedHost | doctor.PerNetNS,
		Proves: []string{"/proc/net/netstat TcpExt ListenOverflows"},
		Check:  checkListenOverflow,
	})
}

func checkListenOverflow(f *doctor.Facts) doctor.Result {
	cur, prev := f.NetStats()
	if cur == nil || cur.TcpExt == nil {
		return doctor.Skip("/proc/net/netstat has no TcpExt counters")
	}
	get := func(ns *host.NetStats, k string) (uint64, bool) {
		if ns == nil {
			return 0, false
		}
		v, ok := ns.TcpExt[k]
		return v, ok
	}
	over, ok := get(cur, "ListenOverflows")
	if !ok {
		return doctor.Skip("this kernel does not count ListenOverflows")
	}
	drops, _ := get(cur, "ListenDrops")
	sampled := false
	if p, ok := get(prev, "ListenOverflows"); ok && over >= p {
		pd, _ := get(prev, "ListenDrops")
		over, drops, sampled = over-p, drops-pd, true
	}
	evs := []doctor.Evidence{
		{Source: "/proc/net/netstat TcpExt ListenOverflows", Value: u64(over), Note: window(sampled, "since boot")},
		{Source: "/proc/net/netstat TcpExt ListenDrops", Value: u64(drops), Note: window(sampled, "since boot")},
	}
	if over == 0 && drops == 0 {
		return doctor.Pass("no accept-queue overflows %s", window(sampled, "since boot")).With(evs...)
	}
	r := doctor.Fire("%d accept-queue overflows, %d listen drops %s", over, drops, f.Since(sampled)).With(evs...).
		WithFix(&doctor.Fix{Advice: []string{
			"raise net.core.somaxconn, net.ipv4.tcp_max_syn_backlog and tcp-backlog together (see somaxconn, syn-backlog, tcp-backlog-low)",
			"if the main thread is saturated it accepts too slowly: check io-threads-unset and irq-redis-overlap",
			"the counters are for the whole network namespace: ss -ltn shows which listener's Recv-Q is full",
		}})
	if !sampled {
		r = r.WithSeverity(doctor.Medium)
	}
	return r
}

func u64(v uint64) string { return formatUint(v) }
