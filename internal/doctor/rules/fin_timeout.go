package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "fin-timeout", Section: "tcp", Severity: doctor.Info,
		Title:  "Orphaned sockets pile up, or tcp_fin_timeout was changed for TIME_WAIT",
		Why:    "tcp_fin_timeout bounds orphaned FIN_WAIT_2 sockets only; TIME_WAIT is fixed at 60 s (TCP_TIMEWAIT_LEN), so lowering it does not shorten TIME_WAIT",
		Source: "K-ip tcp_fin_timeout; K-src include/net/tcp.h TCP_TIMEWAIT_LEN; W (set 15)",
		Reads:  []string{"sysctls", "netstat"},
		Needs:  doctor.NeedHost | doctor.PerNetNS,
		Proves: []string{"/proc/sys/net/ipv4/tcp_fin_timeout"},
		Check:  checkFinTimeout,
	})
}

// manyOrphans is the orphan count worth a look.
const manyOrphans = 1000

func checkFinTimeout(f *doctor.Facts) doctor.Result {
	v, ev, ok := f.SysctlInt("net.ipv4.tcp_fin_timeout")
	if !ok {
		return doctor.Skip("net.ipv4.tcp_fin_timeout is not readable")
	}
	orphans := int64(-1)
	evs := []doctor.Evidence{ev}
	if cur, _ := f.NetStats(); cur != nil && cur.Sockstat != nil {
		if n, ok := cur.Sockstat["TCP"]["orphan"]; ok {
			orphans = n
			evs = append(evs, doctor.Ev("/proc/net/sockstat TCP orphan", n))
		}
	}
	switch {
	case orphans >= manyOrphans && v >= 60:
		return doctor.Fire("%d orphaned sockets with tcp_fin_timeout %d", orphans, v).With(evs...).
			WithFix(new(doctor.Fix).Sysctl("net.ipv4.tcp_fin_timeout", "15", ev.Value, "free orphaned FIN_WAIT_2 sockets sooner"))
	case v < 60:
		return doctor.Fire("tcp_fin_timeout is %d: it does not shorten TIME_WAIT, which stays 60 s", v).With(evs...).
			Note("the write-up set 15 to fight TIME_WAIT sockets; only orphaned FIN_WAIT_2 sockets are affected. It is harmless, but it will not free local ports")
	}
	return doctor.Pass("tcp_fin_timeout %d, orphans %d", v, orphans).With(evs...)
}
