package host

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"path"
	"slices"
	"sort"
	"strings"
)

// A NIC's IP addresses have no file: the live machine answers through
// netlink (RTM_GETADDR, what `ip addr` shows: one dump for every NIC of a
// Read, kernel.Live.InterfaceAddrs); a capture keeps them in
// netaddr/IF.json and a fixture tree answers from there:
//
//	["192.168.100.2/24","fe80::2a41:c6ff:fe5a:e31/64"]
//
// Bond slaves, a VLAN's parent and a bridge's ports are the NIC's
// lower_* links in sysfs:
//
//	/sys/class/net/bond0/lower_enp25s0 -> ../../../pci0000:14/.../net/enp25s0

func netaddrPath(ifname string) string { return "/netaddr/" + ifname + ".json" }

// readNICAddrs fills Addresses and Lower for every NIC.
func readNICAddrs(r *reader) error {
	for i := range r.snap.NICs {
		n := &r.snap.NICs[i]
		data, err := r.fs.readVirtual(netaddrPath(n.Name), func() ([]byte, error) { return r.liveAddrs(n.Name) })
		if err == nil {
			var addrs []string
			if err := json.Unmarshal(data, &addrs); err != nil {
				r.failAs("addresses "+n.Name, &ParseError{Path: netaddrPath(n.Name), Err: err})
			}
			n.Addresses = addrs
		} else if !isAbsent(err) {
			r.failAs("addresses "+n.Name, err)
		}
		n.Lower = lowerLinks(r, n.Name)
	}
	return nil
}

// liveAddrs answers for one NIC from the machine's address table, dumped
// once per Read (addrTable).
func (r *reader) liveAddrs(ifname string) ([]byte, error) {
	if r.addrs == nil {
		r.addrs = &addrTable{}
		r.addrs.byName, r.addrs.err = r.fs.kernel.InterfaceAddrs()
	}
	if r.addrs.err != nil {
		return nil, r.addrs.err
	}
	addrs, ok := r.addrs.byName[ifname]
	if !ok {
		return nil, fmt.Errorf("addresses of %s: no such network interface in the netlink dump (it went away while being read?)", ifname)
	}
	return json.Marshal(addrs)
}

// addrTable is the calling thread's namespace's addresses by interface
// name, every interface listed ([] for none).
type addrTable struct {
	byName map[string][]string
	err    error
}

// lowerLinks names the NIC's lower devices from its lower_* links.
func lowerLinks(r *reader, ifname string) []string {
	dir := "/sys/class/net/" + ifname
	var out []string
	for _, e := range r.dir(dir) {
		if !strings.HasPrefix(e.Name, "lower_") {
			continue
		}
		if target, err := r.fs.Readlink(dir + "/" + e.Name); err == nil {
			out = append(out, path.Base(target))
		}
	}
	return out
}

// NICOfAddr returns the NIC that holds addr (loopback addresses belong to
// lo), or nil.
func (s *Snapshot) NICOfAddr(addr netip.Addr) *NIC {
	addr = addr.Unmap()
	for i := range s.NICs {
		for _, a := range s.NICs[i].Addresses {
			if p, err := netip.ParsePrefix(a); err == nil && p.Addr().Unmap() == addr {
				return &s.NICs[i]
			}
		}
	}
	if addr.IsLoopback() {
		return s.NIC("lo")
	}
	return nil
}

// LowerNICs returns the NICs under n (a bond's slaves, a VLAN's parent),
// recursively, down to those with no lower device; n itself if it has
// none.
func (s *Snapshot) LowerNICs(n *NIC) []*NIC {
	if len(n.Lower) == 0 {
		return []*NIC{n}
	}
	var out []*NIC
	for _, name := range n.Lower {
		if l := s.NIC(name); l != nil && l != n {
			out = append(out, s.LowerNICs(l)...)
		}
	}
	return out
}

// processTraffic counts the process's established connections by the NIC
// that holds their local address (the NIC its clients reach it through).
func processTraffic(s *Snapshot, socks []tcpSocket, p *Process) []NICTraffic {
	ports := map[int]bool{}
	for _, l := range p.Listen {
		ports[l.Port] = true
	}
	count := map[string]int{}
	nicOf := map[string]string{} // by local address: a server has few, and 20,000 clients
	for _, sk := range socks {
		if sk.state != tcpEstablished || !ports[sk.localPort] {
			continue
		}
		name, seen := nicOf[sk.local]
		if !seen {
			if addr, ok := hexToAddr(sk.local); ok { // "": not an address, not counted
				name = "unknown"
				if n := s.NICOfAddr(addr); n != nil {
					name = n.Name
				}
			}
			nicOf[sk.local] = name
		}
		if name != "" {
			count[name]++
		}
	}
	out := make([]NICTraffic, 0, len(count))
	for name, c := range count {
		out = append(out, NICTraffic{NIC: name, Connections: c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Connections != out[j].Connections {
			return out[i].Connections > out[j].Connections
		}
		return out[i].NIC < out[j].NIC
	})
	if len(out) == 0 {
		return nil
	}
	return out
}

// listenNICs names the NICs of the process's specific listening
// addresses (wildcards name none).
func listenNICs(s *Snapshot, p *Process) []string {
	var out []string
	for _, l := range p.Listen {
		addr, err := netip.ParseAddr(l.Addr)
		if err != nil || addr.IsUnspecified() {
			continue
		}
		if n := s.NICOfAddr(addr); n != nil && !slices.Contains(out, n.Name) {
			out = append(out, n.Name)
		}
	}
	return out
}

// hexToAddr parses /proc/net/tcp's hex address.
func hexToAddr(h string) (netip.Addr, bool) {
	addr, err := netip.ParseAddr(formatHexAddr(h))
	return addr, err == nil
}
