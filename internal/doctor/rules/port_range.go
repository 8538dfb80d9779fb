package rules

import (
	"fmt"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "port-range", Section: "client", Severity: doctor.High,
		Title:  "The local port range is narrow or nearly used up",
		Why:    "every outgoing connection takes a local port until TIME_WAIT ends; when ip_local_port_range runs out connect() fails with \"Cannot assign requested address\"",
		Source: "K-ip ip_local_port_range (default 32768 60999); W (\"10000 20000\" gave EADDRNOTAVAIL)",
		Reads:  []string{"sysctls", "netstat"},
		Needs:  doctor.NeedHost | doctor.PerNetNS,
		Proves: []string{"/proc/sys/net/ipv4/ip_local_port_range"},
		Check:  checkPortRange,
	})
}

// defaultPorts is the size of the kernel's default range, 32768-60999.
const defaultPorts = 60999 - 32768 + 1

func checkPortRange(f *doctor.Facts) doctor.Result {
	r, ev, ok := f.SysctlInts("net.ipv4.ip_local_port_range")
	if !ok || len(r) != 2 {
		return doctor.Skip("net.ipv4.ip_local_port_range is not readable")
	}
	size := r[1] - r[0] + 1
	used, uev := portsInUse(f)
	evs := append([]doctor.Evidence{ev}, uev...)
	fix := new(doctor.Fix).Sysctl("net.ipv4.ip_local_port_range", "1024 65535", ev.Value, "more local ports for outgoing connections")
	fix.Advice = []string{"reserve the ports your servers listen on first (see reserved-ports): a wider range reaches them"}
	switch {
	case used*10 > size*7:
		return doctor.Fire("%d sockets use %d%% of the %d local ports (%d-%d)", used, used*100/size, size, r[0], r[1]).With(evs...).WithFix(fix)
	case size < defaultPorts:
		return doctor.Fire("ip_local_port_range %d-%d gives %d ports, fewer than the kernel's default %d", r[0], r[1], size, defaultPorts).With(evs...).WithFix(fix).WithSeverity(doctor.Medium)
	}
	return doctor.Pass("%d local ports, %d in use towards Redis ports", size, used).With(evs...)
}

// portsInUse counts this host's sockets to Redis ports (ESTABLISHED and
// TIME_WAIT), which each hold a local port.
func portsInUse(f *doctor.Facts) (int64, []doctor.Evidence) {
	cur, _ := f.NetStats()
	if cur == nil || cur.TCP == nil {
		return 0, nil
	}
	var n int64
	var evs []doctor.Evidence
	for _, p := range cur.TCP.Ports {
		k := int64(p.ToEstablished + p.ToTimeWait)
		if k == 0 {
			continue
		}
		n += k
		evs = append(evs, doctor.Ev(fmt.Sprintf("/proc/net/tcp sockets to port %d", p.Port), fmt.Sprintf("%d established, %d time-wait", p.ToEstablished, p.ToTimeWait)))
	}
	return n, evs
}
