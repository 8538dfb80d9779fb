package rules

import (
	"fmt"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "tcp-rmem-default", Section: "tcp", Severity: doctor.Info,
		Title:  "tcp_rmem's default is below the kernel's",
		Why:    "the middle value of tcp_rmem is each socket's initial receive buffer (131072 on current kernels); lowering it shrinks every connection's first window",
		Source: "K-ip tcp_rmem; W (tcp_rmem \"4096 87380 16777216\"); KP",
		Reads:  []string{"sysctls"},
		Needs:  doctor.NeedHost | doctor.PerNetNS,
		Proves: []string{"/proc/sys/net/ipv4/tcp_rmem"},
		Check:  checkTCPRmem,
	})
}

// kernelRmemDefault is tcp_rmem's default middle value since 4.20.
const kernelRmemDefault = 131072

func checkTCPRmem(f *doctor.Facts) doctor.Result {
	v, ev, ok := f.SysctlInts("net.ipv4.tcp_rmem")
	if !ok || len(v) != 3 {
		return doctor.Skip("net.ipv4.tcp_rmem is not readable")
	}
	if v[1] >= kernelRmemDefault {
		return doctor.Pass("tcp_rmem %d %d %d", v[0], v[1], v[2]).With(ev)
	}
	want := fmt.Sprintf("%d %d %d", v[0], kernelRmemDefault, max(v[2], 6291456))
	return doctor.Fire("tcp_rmem's default %d is below the kernel's %d", v[1], kernelRmemDefault).With(ev).
		WithFix(new(doctor.Fix).Sysctl("net.ipv4.tcp_rmem", want, ev.Value, "back to the kernel's initial receive buffer")).
		Note("the write-up's \"4096 87380 16777216\" copies an old default: applied to a current kernel it lowers the initial buffer. Raise only the third (max) field, and only with a measured need")
}
