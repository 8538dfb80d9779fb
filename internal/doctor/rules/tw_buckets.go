package rules

import (
	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "tw-buckets-lowered", Section: "tcp", Severity: doctor.Low,
		Title:  "tcp_max_tw_buckets was lowered",
		Why:    "the limit only guards against DoS; below it TIME_WAIT sockets are destroyed early (TCPTimeWaitOverflow), which the kernel says \"you must not\" do artificially",
		Source: "K-ip tcp_max_tw_buckets; K-src tcp_minisocks.c tcp_time_wait; W (lowered 100000 -> 10000)",
		Reads:  []string{"sysctls", "netstat"},
		Needs:  doctor.NeedHost | doctor.PerNetNS,
		Proves: []string{"/proc/sys/net/ipv4/tcp_max_tw_buckets"},
		Check:  checkTWBuckets,
	})
}

func checkTWBuckets(f *doctor.Facts) doctor.Result {
	v, ev, ok := f.SysctlInt("net.ipv4.tcp_max_tw_buckets")
	if !ok {
		return doctor.Skip("net.ipv4.tcp_max_tw_buckets is not readable")
	}
	over, sampled, _ := f.HostDelta(tcpExt("TCPTimeWaitOverflow"))
	oev := doctor.Evidence{Source: "/proc/net/netstat TcpExt TCPTimeWaitOverflow", Value: u64(over), Note: window(sampled, "since boot")}
	// The boot default is half the established hash size: a power of two.
	handSet := !isPowerOfTwo(v)
	if over == 0 && !handSet {
		return doctor.Pass("tcp_max_tw_buckets %d (a boot default), no overflows", v).With(ev, oev)
	}
	fix := new(doctor.Fix).Sysctl("net.ipv4.tcp_max_tw_buckets", "262144", ev.Value, "let TIME_WAIT sockets live their full 60 s")
	r := doctor.Fire("tcp_max_tw_buckets %d, %d TIME_WAIT overflows %s", v, over, window(sampled, "since boot")).With(ev, oev).WithFix(fix).
		Note("the write-up lowered it to 10000 to get rid of TIME_WAIT sockets; the kernel documentation says not to: it breaks TCP's protection against late duplicates. Fix port exhaustion with pooling or a wider ip_local_port_range instead")
	if handSet && over == 0 {
		r.Message = "tcp_max_tw_buckets " + ev.Value + " was set by hand (boot defaults are powers of two)"
	}
	return r
}
