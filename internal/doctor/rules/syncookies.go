package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "syncookies-off", Section: "tcp", Severity: doctor.Low,
		Title:  "SYN cookies are off",
		Why:    "with syncookies 0 a full SYN queue drops new connects instead of answering with a cookie: a connect storm becomes timeouts",
		Source: "K-ip tcp_syncookies (default 1); W (set 0)",
		Reads:  []string{"sysctls"},
		Needs:  doctor.NeedHost | doctor.PerNetNS,
		Proves: []string{"/proc/sys/net/ipv4/tcp_syncookies"},
		Check:  checkSyncookies,
	})
}

func checkSyncookies(f *doctor.Facts) doctor.Result {
	v, ev, ok := f.SysctlInt("net.ipv4.tcp_syncookies")
	if !ok {
		return doctor.Skip("this kernel has no tcp_syncookies (CONFIG_SYN_COOKIES off)")
	}
	if v != 0 {
		return doctor.Pass("tcp_syncookies %d", v).With(ev)
	}
	return doctor.Fire("tcp_syncookies is 0").With(ev).
		WithFix(new(doctor.Fix).Sysctl("net.ipv4.tcp_syncookies", "1", ev.Value, "answer with cookies when the SYN queue is full")).
		Note("the write-up turned it off along with its other sysctls; with tcp_max_syn_backlog large enough cookies are never used, so 1 costs nothing")
}
