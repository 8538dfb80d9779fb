package rules

import (
	"fmt"
	"strings"

	"redline/internal/doctor"
)

func init() {
	doctor.Register(doctor.Rule{
		ID: "reserved-ports", Section: "client", Severity: doctor.Medium,
		Title:  "The local port range covers the Redis ports",
		Why:    "an outgoing connection can take the Redis port (or its cluster bus port, port+10000) as its local port; the server then cannot bind it on restart",
		Source: "K-ip ip_local_reserved_ports; RS-conf cluster-port (inference; W's ranges cover 16379)",
		Reads:  []string{"sysctls"},
		Needs:  doctor.NeedHost | doctor.ReadsRedis | doctor.PerNetNS | doctor.CombinesNodes,
		Proves: []string{"/proc/sys/net/ipv4/ip_local_port_range"},
		Check:  checkReservedPorts,
	})
}

func checkReservedPorts(f *doctor.Facts) doctor.Result {
	r, ev, ok := f.SysctlInts("net.ipv4.ip_local_port_range")
	if !ok || len(r) != 2 {
		return doctor.Skip("net.ipv4.ip_local_port_range is not readable")
	}
	reserved, rev, ok := f.Sysctl("net.ipv4.ip_local_reserved_ports")
	if !ok {
		// the fix writes the whole list: without the ports already
		// reserved it would drop them
		return doctor.Skip("net.ipv4.ip_local_reserved_ports is not readable: the ports already reserved are unknown")
	}
	var ports []int
	for _, g := range f.Servers() {
		ports = append(ports, redisPorts(g)...)
	}
	var hit []string
	for _, p := range ports {
		if int64(p) >= r[0] && int64(p) <= r[1] && !portListed(reserved, p) {
			hit = append(hit, fmt.Sprint(p))
		}
	}
	if len(hit) == 0 {
		return doctor.Pass("%s outside the range or reserved", portsAre(joinInts(ports), len(ports))).With(ev, rev)
	}
	want := strings.Trim(reserved+","+strings.Join(hit, ","), ",")
	return doctor.Fire("%s inside ip_local_port_range %d-%d and not reserved", portsAre(strings.Join(hit, ","), len(hit)), r[0], r[1]).With(ev, rev).
		WithFix(new(doctor.Fix).Sysctl("net.ipv4.ip_local_reserved_ports", want, reserved, "keep the Redis ports out of automatic assignment"))
}

// portsAre is "port 6379 is" or "ports 6379,16379 are".
func portsAre(list string, n int) string {
	if n == 1 {
		return "port " + list + " is"
	}
	return "ports " + list + " are"
}

// redisPorts are the server's port and its cluster bus port.
func redisPorts(f *doctor.Facts) []int {
	port := 6379
	if n, ok := f.Info().Int("tcp_port"); ok && n > 0 {
		port = int(n)
	}
	bus := port + 10000
	if n, _, ok := f.ConfigInt("cluster-port"); ok && n > 0 {
		bus = int(n)
	}
	return []int{port, bus}
}

// portListed reports whether p is in a list like "6379,16379,30000-30010".
func portListed(list string, p int) bool {
	for _, part := range strings.Split(list, ",") {
		var lo, hi int
		if n, _ := fmt.Sscanf(strings.TrimSpace(part), "%d-%d", &lo, &hi); n == 2 && p >= lo && p <= hi {
			return true
		} else if n == 1 && p == lo {
			return true
		}
	}
	return false
}
