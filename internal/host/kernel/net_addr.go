package kernel

import (
	"bytes"
	"encoding/binary"
	"net/netip"

	"golang.org/x/sys/unix"
)

// InterfaceAddrs dumps the links (index -> name) and then every address
// with one RTM_GETLINK and one RTM_GETADDR dump (what `ip addr` shows):
// two dumps whatever the number of interfaces (net.InterfaceByName and
// Addrs made two full dumps per interface), each receive with a
// deadline. An address is IFA_LOCAL when the kernel gives one (the local
// end of a point-to-point link), else IFA_ADDRESS, "ADDR/PREFIXLEN", in
// the kernel's order: what net.Interface.Addrs gives.
func (Live) InterfaceAddrs() (map[string][]string, error) {
	fd, err := openNetlink(unix.NETLINK_ROUTE, "rtnetlink")
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := make([]byte, 256<<10)
	ne := binary.NativeEndian
	names := map[uint32]string{}
	err = netlinkDump(fd, "rtnetlink links", netlinkRequest(unix.RTM_GETLINK, make([]byte, unix.SizeofIfInfomsg)), buf, func(typ uint16, data []byte) {
		if typ != unix.RTM_NEWLINK || len(data) < unix.SizeofIfInfomsg {
			return
		}
		netlinkAttrs(data[unix.SizeofIfInfomsg:], func(at uint16, val []byte) {
			if at == unix.IFLA_IFNAME {
				names[ne.Uint32(data[4:])] = string(bytes.TrimRight(val, "\x00"))
			}
		})
	})
	if err != nil {
		return nil, err
	}
	byName := make(map[string][]string, len(names))
	for _, name := range names {
		byName[name] = []string{}
	}
	err = netlinkDump(fd, "rtnetlink addresses", netlinkRequest(unix.RTM_GETADDR, make([]byte, unix.SizeofIfAddrmsg)), buf, func(typ uint16, data []byte) {
		if typ != unix.RTM_NEWADDR || len(data) < unix.SizeofIfAddrmsg {
			return
		}
		name, ok := names[ne.Uint32(data[4:])]
		if a, found := ifAddr(data); ok && found {
			byName[name] = append(byName[name], a)
		}
	})
	return byName, err
}

// ifAddr reads an RTM_NEWADDR body (ifaddrmsg, then attributes) as
// "ADDR/PREFIXLEN".
func ifAddr(data []byte) (string, bool) {
	var local, address []byte
	netlinkAttrs(data[unix.SizeofIfAddrmsg:], func(at uint16, val []byte) {
		switch at {
		case unix.IFA_LOCAL:
			local = val
		case unix.IFA_ADDRESS:
			address = val
		}
	})
	if local == nil {
		local = address
	}
	addr, ok := netip.AddrFromSlice(local)
	if !ok {
		return "", false
	}
	return netip.PrefixFrom(addr, int(data[1])).String(), true
}
