package host

import (
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// A host often runs several redis-servers, some in network namespaces of
// their own (containers, ip netns): the same "0.0.0.0:6379" may be three
// servers, and only the one in the inspector's namespace is reached by
// dialling it. These helpers say which server an address names, and how
// to reach one that is elsewhere.
//
// Named namespaces are the files iproute2 keeps (/run/netns/NAME, bind
// mounts of the namespace): their inode is the namespace's, as in
//
//	/proc/4242/ns/net -> net:[4026532291]
//	/run/netns/blue      inode 4026532291
//
// A capture keeps the pairs in the virtual file netns-names, one
// "INODE NAME" per line.

// netnsNamesPath is the virtual file of the named namespaces.
const netnsNamesPath = "/netns-names"

// netnsName names namespace ino from /run/netns, "" when it has no name
// there (a container's: reach it by its pid).
func (r *reader) netnsName(ino uint64) string {
	if r.netnsNames == nil {
		data, _ := r.fs.readVirtual(netnsNamesPath, liveNetnsNames)
		r.netnsNames = parseNetnsNames(data)
	}
	return r.netnsNames[ino]
}

// liveNetnsNames lists /run/netns as "INODE NAME" lines.
func liveNetnsNames() ([]byte, error) {
	ents, err := os.ReadDir("/run/netns")
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, e := range ents {
		var st syscall.Stat_t
		if syscall.Stat("/run/netns/"+e.Name(), &st) == nil {
			fmt.Fprintf(&b, "%d %s\n", st.Ino, e.Name())
		}
	}
	return []byte(b.String()), nil
}

// parseNetnsNames reads "INODE NAME" lines; the first name of an inode wins.
func parseNetnsNames(data []byte) map[uint64]string {
	out := map[uint64]string{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if ino, err := strconv.ParseUint(f[0], 10, 64); err == nil && out[ino] == "" {
			out[ino] = f[1]
		}
	}
	return out
}

// OtherNetNS reports whether the process runs in a network namespace
// known to be not the inspector's: dialling its address from here reaches
// another server, or none.
func (p *Process) OtherNetNS() bool {
	return p.NetNS != 0 && !p.NetNSIsInspector
}

// NetNSFlag is the --netns value that reaches the process's namespace:
// its name under /run/netns, else its pid's namespace file.
func (p *Process) NetNSFlag() string {
	if p.NetNSName != "" {
		return p.NetNSName
	}
	return fmt.Sprintf("/proc/%d/ns/net", p.PID)
}

// ClusterNode reports whether the server runs Redis Cluster: redis-server
// titles itself "redis-server *:7000 [cluster]".
func (p *Process) ClusterNode() bool {
	return slices.ContainsFunc(p.Cmdline, func(a string) bool { return strings.Contains(a, "[cluster]") })
}

// ListenAddrs are the process's listening addresses ("0.0.0.0:6379"),
// each once.
func (p *Process) ListenAddrs() []string {
	var out []string
	for _, l := range p.Listen {
		if a := net.JoinHostPort(l.Addr, strconv.Itoa(l.Port)); !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// ListensOn reports whether a TCP connection to host:port from inside the
// process's namespace reaches one of its listeners: same port, and its
// address, a wildcard, or (for a loopback or unnamed host) loopback.
func (p *Process) ListensOn(hostName string, port int) bool {
	ip := net.ParseIP(hostName)
	loop := hostName == "" || hostName == "localhost" || (ip != nil && ip.IsLoopback())
	for _, l := range p.Listen {
		if l.Port != port {
			continue
		}
		lip := net.ParseIP(l.Addr)
		switch {
		case lip == nil:
		case lip.IsUnspecified(), ip != nil && lip.Equal(ip), loop && lip.IsLoopback():
			return true
		}
	}
	return false
}

// ServerAt returns the redis-server of the snapshot that a TCP address
// dialled from the inspector's namespace reaches: one listening on it
// there (or, when no namespace could be read, anywhere). nil when none
// does; the error when the address is not HOST:PORT.
func (s *Snapshot) ServerAt(addr string) (*Process, error) {
	h, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(ps)
	if err != nil {
		return nil, fmt.Errorf("port %q is not a number", ps)
	}
	var unknown *Process
	for i := range s.Processes {
		p := &s.Processes[i]
		if !p.ListensOn(h, port) {
			continue
		}
		if p.NetNSIsInspector {
			return p, nil
		}
		if p.NetNS == 0 && unknown == nil {
			unknown = p
		}
	}
	return unknown, nil
}
