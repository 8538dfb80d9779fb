package redisadmin

import (
	"fmt"
	"net"
	"net/netip"
)

// NodeGetsPassword decides, once for every caller that reaches a cluster
// through one node (doctor's node readings, autotune --cluster --addr),
// whether a node the seed announced gets the password given for the seed.
// CLUSTER SHARDS says whatever the seed was told or chose to say: a
// hostile or misconfigured seed can list any address, and the password
// was given for the seed. A node gets it when it is on the seed's host
// (the same IP, or both loopback) or in the seed's network (the same
// IPv4 /24 or IPv6 /64), or when any (--cluster-auth-any) says every
// announced node is trusted. The error says why not and what to do.
func NodeGetsPassword(seed, node string, any bool) error {
	if any {
		return nil
	}
	s, serr := addrOf(seed)
	n, nerr := addrOf(node)
	switch {
	case serr != nil || nerr != nil:
		if hostOf(seed) == hostOf(node) {
			return nil
		}
		return fmt.Errorf("not sent the password: %s is not an IP address on the seed %s's host or network (give --cluster-auth-any to send it to every node the seed lists)", node, seed)
	case s == n, s.IsLoopback() && n.IsLoopback(), sameNetwork(s, n):
		return nil
	}
	return fmt.Errorf("not sent the password: %s is neither on the seed %s's host nor in its network (give --cluster-auth-any to send it to every node the seed lists)", node, seed)
}

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

func addrOf(addr string) (netip.Addr, error) {
	a, err := netip.ParseAddr(hostOf(addr))
	return a.Unmap(), err
}

func sameNetwork(a, b netip.Addr) bool {
	bits := 64
	if a.Is4() {
		bits = 24
	}
	if a.Is4() != b.Is4() {
		return false
	}
	p, err := a.Prefix(bits)
	return err == nil && p.Contains(b)
}
