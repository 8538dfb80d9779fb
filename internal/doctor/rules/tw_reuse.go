package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "tw-reuse", Section: "client", Severity: doctor.Info,
		Title:  "TIME_WAIT reuse is off for a client under port pressure",
		Why:    "tcp_tw_reuse lets new outgoing connections reuse TIME_WAIT ports when timestamps make it safe; 2 (the default) allows it on loopback only, 0 nowhere",
		Source: "K-ip tcp_tw_reuse (\"should not be changed without advice/request of technical experts\"); W (set 0, then hit EADDRNOTAVAIL)",
		Reads:  []string{"sysctls", "netstat"},
		Needs:  doctor.NeedHost | doctor.PerNetNS,
		Proves: []string{"/proc/sys/net/ipv4/tcp_tw_reuse"},
		Check:  checkTWReuse,
	})
}

// twPressure is the TIME_WAIT count towards Redis ports that counts as
// port pressure.
const twPressure = 1000

func checkTWReuse(f *doctor.Facts) doctor.Result {
	v, ev, ok := f.SysctlInt("net.ipv4.tcp_tw_reuse")
	if !ok {
		return doctor.Skip("net.ipv4.tcp_tw_reuse is not readable")
	}
	tw, lo := timeWaitToRedis(f)
	twEv := doctor.Ev("TIME_WAIT sockets to Redis ports", tw)
	loEv := doctor.Ev("of them on loopback", lo)
	pressing := tw
	if v == 2 { // 2 reuses loopback's TIME_WAIT ports: only the others press
		pressing -= lo
	}
	if v == 1 || v != 0 && pressing < twPressure {
		return doctor.Pass("tcp_tw_reuse %d, %d TIME_WAIT sockets to Redis ports (%d on loopback)", v, tw, lo).With(ev, twEv, loEv)
	}
	fix := new(doctor.Fix).Sysctl("net.ipv4.tcp_tw_reuse", "1", ev.Value, "reuse TIME_WAIT ports for new outgoing connections")
	fix.Caution = "the kernel documentation says not to change it without expert advice; prefer connection pooling (connection-churn)"
	r := doctor.Fire("tcp_tw_reuse %d with %d TIME_WAIT sockets to Redis ports (%d on loopback)", v, tw, lo).With(ev, twEv, loEv).WithFix(fix)
	if v == 0 {
		r = r.WithSeverity(doctor.Low).Note("0 also disables reuse on loopback, where the default 2 allows it: local benchmarks with many clients run out of ports first")
	}
	return r
}

// timeWaitToRedis counts the TIME_WAIT sockets to Redis ports, and those
// of them on loopback.
func timeWaitToRedis(f *doctor.Facts) (tw, loopback int) {
	cur, _ := f.NetStats()
	if cur == nil || cur.TCP == nil {
		return 0, 0
	}
	for _, p := range cur.TCP.Ports {
		tw += p.ToTimeWait
		loopback += p.ToTimeWaitLoopback
	}
	return tw, loopback
}
