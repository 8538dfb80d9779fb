package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "tw-recycle", Section: "tcp", Severity: doctor.High,
		Title:  "tcp_tw_recycle is on",
		Why:    "it drops connections from clients behind NAT whose timestamps go backwards; it was removed from Linux in 4.12 for that reason",
		Source: "torvalds/linux commit 4396e46187ca; K-ip",
		Reads:  []string{"sysctls"},
		Needs:  doctor.NeedHost | doctor.PerNetNS,
		Proves: []string{"/proc/sys/net/ipv4/tcp_tw_recycle"},
		Check:  checkTWRecycle,
	})
}

func checkTWRecycle(f *doctor.Facts) doctor.Result {
	v, ev, ok := f.SysctlInt("net.ipv4.tcp_tw_recycle")
	if !ok {
		return doctor.Skip("this kernel has no tcp_tw_recycle (removed in 4.12)")
	}
	if v == 0 {
		return doctor.Pass("tcp_tw_recycle 0").With(ev)
	}
	return doctor.Fire("tcp_tw_recycle is %d: clients behind NAT lose connections", v).With(ev).
		WithFix(new(doctor.Fix).Sysctl("net.ipv4.tcp_tw_recycle", "0", ev.Value, "stop dropping NATed clients"))
}
