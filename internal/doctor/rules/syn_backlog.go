package rules

import (
	"fmt"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "syn-backlog", Section: "tcp", Severity: doctor.Medium,
		Title:  "tcp_max_syn_backlog is below tcp-backlog",
		Why:    "half-open connections wait in the SYN queue, bounded by tcp_max_syn_backlog; redis.conf says to raise it together with somaxconn",
		Source: "RS-conf tcp-backlog; K-ip tcp_max_syn_backlog",
		Reads:  []string{"sysctls"},
		Needs:  doctor.NeedHost | doctor.ReadsRedis | doctor.PerNetNS,
		Proves: []string{"/proc/sys/net/ipv4/tcp_max_syn_backlog", "*tcp-backlog"},
		Check:  checkSynBacklog,
	})
}

func checkSynBacklog(f *doctor.Facts) doctor.Result {
	syn, ev, ok := f.SysctlInt("net.ipv4.tcp_max_syn_backlog")
	if !ok {
		return doctor.Skip("net.ipv4.tcp_max_syn_backlog is not readable")
	}
	backlog, bev, have := f.ConfigInt("tcp-backlog")
	if !have {
		backlog, bev = defaultTCPBacklog, doctor.Evidence{Source: "tcp-backlog", Value: fmt.Sprint(defaultTCPBacklog), Note: "redis.conf default; no server checked"}
	}
	want := max(backlog, int64(f.ExpectedClients))
	if syn >= want {
		return doctor.Pass("tcp_max_syn_backlog %d >= %d", syn, want).With(ev, bev)
	}
	return doctor.Fire("tcp_max_syn_backlog %d is below %d", syn, want).With(ev, bev).
		WithFix(new(doctor.Fix).Sysctl("net.ipv4.tcp_max_syn_backlog", fmt.Sprint(max(want, 8192)), ev.Value, "room for connects in flight"))
}
