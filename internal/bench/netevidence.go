package bench

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"redline/internal/benchdata"
	"redline/internal/host"
	"redline/internal/netns"
)

// The kernel's view of a run's connections: what redis-benchmark never
// shows. A listen queue that overflows drops SYNs, and each dropped
// connect waits for the 1 s SYN retransmit; a run that reports 2.3 s of
// measurement may have spent 5 s in those waits before it. The counters
// are per network namespace, so they are read with a thread inside the
// server's (/proc/thread-self/net: /proc/self/net would show the main
// thread's namespace) and inside the load's.

// netProbe holds the counters read before a run.
type netProbe struct {
	serverNS, clientNS string
	server, client     bool
	srvBefore          map[string]map[string]uint64
	cliBefore          map[string]map[string]uint64
	// serverProc reads a server host that is not this one.
	serverProc func(context.Context) (fs.FS, error)
	srvFS      fs.FS // serverProc's last reading
}

// startNetProbe reads the counters before the first connect. The server
// side is read when its host is this one: the lab's server namespace, or
// a loopback or local address.
func (r *runner) startNetProbe() *netProbe {
	p := &netProbe{clientNS: r.o.NetNS, serverProc: r.o.ServerProc}
	p.serverNS, p.server = r.serverNetNS()
	p.client = r.domain != unix.AF_UNIX
	if p.serverProc != nil {
		p.server = true
	}
	if p.server {
		p.srvBefore, _ = p.serverCounters()
		p.server = p.srvBefore != nil
	}
	if p.client {
		p.cliBefore, _ = readCounters(p.clientNS)
		p.client = p.cliBefore != nil
	}
	return p
}

// serverNetNS says where the server's counters are, and whether they are
// readable at all.
func (r *runner) serverNetNS() (string, bool) {
	if r.o.ServerNetNS != "" {
		return r.o.ServerNetNS, true
	}
	var ip net.IP
	switch sa := r.sockaddr.(type) {
	case *unix.SockaddrInet4:
		ip = net.IP(sa.Addr[:])
	case *unix.SockaddrInet6:
		ip = net.IP(sa.Addr[:])
	default:
		return "", false // a unix socket: no TCP listen queue
	}
	if ip.IsLoopback() {
		return r.o.NetNS, true
	}
	return "", r.o.NetNS == "" && isLocalIP(ip)
}

func isLocalIP(ip net.IP) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// readCounters reads /proc/net/netstat and /proc/net/snmp inside ns.
func readCounters(ns string) (map[string]map[string]uint64, error) {
	var out map[string]map[string]uint64
	err := netns.Do(ns, func() (err error) {
		out, err = parseCounters(func(f string) ([]byte, error) { return os.ReadFile("/proc/thread-self/net/" + f) })
		return err
	})
	return out, err
}

// parseCounters parses the netstat and snmp files read reads.
func parseCounters(read func(file string) ([]byte, error)) (map[string]map[string]uint64, error) {
	out := map[string]map[string]uint64{}
	for _, f := range []string{"netstat", "snmp"} {
		data, err := read(f)
		if err != nil {
			return nil, err
		}
		sec, err := host.ParseNetstat(data)
		if err != nil {
			return nil, fmt.Errorf("/proc/net/%s: %w", f, err)
		}
		for k, v := range sec {
			out[k] = v
		}
	}
	return out, nil
}

// serverCounters reads the server's namespace's counters: through
// serverProc when the server host is another machine.
func (p *netProbe) serverCounters() (map[string]map[string]uint64, error) {
	if p.serverProc == nil {
		return readCounters(p.serverNS)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fsys, err := p.serverProc(ctx)
	if err != nil || fsys == nil {
		return nil, fmt.Errorf("the server host's counters: %v", err)
	}
	p.srvFS = fsys
	return parseCounters(func(f string) ([]byte, error) { return fs.ReadFile(fsys, "net/"+f) })
}

// finish reads the counters again and the sockets; nil when nothing was
// readable. explain names the problems once the connections are summed.
func (p *netProbe) finish() *benchdata.NetEvidence {
	if p == nil || (!p.server && !p.client) {
		return nil
	}
	e := &benchdata.NetEvidence{}
	if p.server {
		if after, err := p.serverCounters(); err == nil {
			e.Server = serverDelta(p.srvBefore, after)
			if p.serverProc != nil { // another machine: as its session sampled it
				e.Server.Somaxconn = sysctlIn(p.srvFS, "sys/net/core/somaxconn")
			} else {
				e.Server.NetNS, e.Server.Somaxconn = p.serverNS, readSysctl(p.serverNS, "net/core/somaxconn")
			}
		}
	}
	if p.client {
		if after, err := readCounters(p.clientNS); err == nil {
			e.Client = p.clientSide(after)
		}
	}
	if e.Server == nil && e.Client == nil {
		return nil
	}
	return e
}

// explain attaches the evidence to the run's connections and names its
// problems.
func explain(e *benchdata.NetEvidence, c *benchdata.Connections) {
	if c == nil {
		return
	}
	if e == nil && c.Failures["EADDRNOTAVAIL"] > 0 {
		e = &benchdata.NetEvidence{} // named even when nothing was readable
	}
	if e == nil {
		return
	}
	e.Problems = problems(e, c)
	c.Kernel = e
}

func serverDelta(before, after map[string]map[string]uint64) *benchdata.ServerNet {
	d := func(sec, name string) uint64 {
		a, b := after[sec][name], before[sec][name]
		if a < b {
			return 0 // a counter the kernel reset: no delta to show
		}
		return a - b
	}
	return &benchdata.ServerNet{
		ListenOverflows: d("TcpExt", "ListenOverflows"), ListenDrops: d("TcpExt", "ListenDrops"),
		SyncookiesSent: d("TcpExt", "SyncookiesSent"), ReqQFullDrops: d("TcpExt", "TCPReqQFullDrop"),
		PassiveOpens: d("Tcp", "PassiveOpens"),
	}
}

func (p *netProbe) clientSide(after map[string]map[string]uint64) *benchdata.ClientNet {
	c := &benchdata.ClientNet{NetNS: p.clientNS,
		ActiveOpens:  after["Tcp"]["ActiveOpens"] - min(after["Tcp"]["ActiveOpens"], p.cliBefore["Tcp"]["ActiveOpens"]),
		AttemptFails: after["Tcp"]["AttemptFails"] - min(after["Tcp"]["AttemptFails"], p.cliBefore["Tcp"]["AttemptFails"]),
		TWReuse:      readSysctl(p.clientNS, "net/ipv4/tcp_tw_reuse"),
	}
	lo, hi, ok := portRange(p.clientNS)
	if !ok {
		return c
	}
	c.PortRange = [2]int{lo, hi}
	netns.Do(p.clientNS, func() error {
		var err error
		c.EphemeralInUse, c.TimeWait, err = host.TCPPortUse(lo, hi)
		return err
	})
	return c
}

// readSysctl reads one integer sysctl inside ns; nil when unreadable.
func readSysctl(ns, rel string) *int64 {
	var v *int64
	netns.Do(ns, func() error {
		v = sysctlIn(os.DirFS("/proc"), "sys/"+rel)
		return nil
	})
	return v
}

// sysctlIn reads one integer file of fsys; nil when unreadable.
func sysctlIn(fsys fs.FS, name string) *int64 {
	if fsys == nil {
		return nil
	}
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return nil
	}
	return &n
}

func portRange(ns string) (lo, hi int, ok bool) {
	netns.Do(ns, func() error {
		data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
		if err != nil {
			return err
		}
		f := strings.Fields(string(data))
		if len(f) == 2 {
			var err1, err2 error
			lo, err1 = strconv.Atoi(f[0])
			hi, err2 = strconv.Atoi(f[1])
			ok = err1 == nil && err2 == nil
		}
		return nil
	})
	return lo, hi, ok
}

// problems names what went wrong, each in one line with the cause and the
// fix, in the doctor's terms (its rules somaxconn, tcp-backlog-low,
// syn-backlog and port-range).
func problems(e *benchdata.NetEvidence, c *benchdata.Connections) []string {
	var out []string
	if s := e.Server; e.Overflowed() {
		limit := "net.core.somaxconn"
		if s.Somaxconn != nil {
			limit = fmt.Sprintf("net.core.somaxconn %d", *s.Somaxconn)
		}
		out = append(out, fmt.Sprintf("the server's listen queue overflowed: %d ListenOverflows, %d ListenDrops in its network namespace; each dropped connect waits for the 1 s SYN retransmit (connect p99 %.0f ms, set-up %.2f s). Cause: the accept queue is min(tcp-backlog, %s). Fix: raise net.core.somaxconn (doctor rule somaxconn) and tcp-backlog (rule tcp-backlog-low) to at least the clients connecting at once, then restart redis-server",
			s.ListenOverflows, s.ListenDrops, c.Connect.P99, c.SetupSeconds, limit))
	}
	if s := e.Server; s != nil && s.SyncookiesSent > 0 {
		out = append(out, fmt.Sprintf("the server's SYN queue filled: %d SYN cookies sent (connections lose TCP options). Fix: raise net.ipv4.tcp_max_syn_backlog (doctor rule syn-backlog)", s.SyncookiesSent))
	}
	if n := c.Failures["EADDRNOTAVAIL"]; n > 0 {
		out = append(out, "the client ran out of local ports: "+portsNote(n, e.Client))
	}
	return out
}

// portsNote explains EADDRNOTAVAIL with the client's port figures.
func portsNote(n int64, cl *benchdata.ClientNet) string {
	l := fmt.Sprintf("%d connects failed with EADDRNOTAVAIL (Cannot assign requested address)", n)
	if cl != nil && cl.PortRange[1] > 0 {
		l += fmt.Sprintf("; %d of the %d ports of net.ipv4.ip_local_port_range %d-%d in use, %d sockets in TIME_WAIT",
			cl.EphemeralInUse, cl.PortRange[1]-cl.PortRange[0]+1, cl.PortRange[0], cl.PortRange[1], cl.TimeWait)
	}
	return l + ". Fix: widen net.ipv4.ip_local_port_range or set net.ipv4.tcp_tw_reuse 1 (doctor rule port-range), or keep connections alive (-k 1)"
}

// writeKernel writes the kernel's counters under the connections line of
// the default report's notes, and each problem, each line after prefix.
func writeKernel(w io.Writer, prefix string, e *benchdata.NetEvidence) {
	if e == nil {
		return
	}
	if s := e.Server; s != nil {
		fmt.Fprintf(w, "%s  server's namespace: %d listen overflows, %d listen drops, %d SYN cookies sent, %d connections accepted\n",
			prefix, s.ListenOverflows, s.ListenDrops, s.SyncookiesSent, s.PassiveOpens)
	}
	if c := e.Client; c != nil {
		l := prefix + fmt.Sprintf("  client's namespace: %d connects started, %d failed; at the end %d sockets in TIME_WAIT", c.ActiveOpens, c.AttemptFails, c.TimeWait)
		if c.PortRange[1] > 0 {
			l += fmt.Sprintf(", %d of %d local ports in use (%d-%d)", c.EphemeralInUse, c.PortRange[1]-c.PortRange[0]+1, c.PortRange[0], c.PortRange[1])
		}
		fmt.Fprintln(w, l)
	}
	for _, p := range e.Problems {
		fmt.Fprintf(w, "%s  WARNING: %s\n", prefix, p)
	}
}
