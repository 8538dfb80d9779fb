package host

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
)

// /proc/net/tcp and tcp6 list the network namespace's TCP sockets,
// addresses in hex (IPv4 as one little-endian word, IPv6 as four), ports
// big-endian, state in hex (0A = LISTEN):
//
//	  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
//	   0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000   999        0 22220 1 ...

// tcpSocket is one row.
type tcpSocket struct {
	family             string // "tcp" or "tcp6"
	local              string // hex address
	localPort, remPort int
	state              int
	inode              uint64
}

// tcpStates names the kernel's TCP states (include/net/tcp_states.h).
var tcpStates = map[int]string{
	1: "ESTABLISHED", 2: "SYN_SENT", 3: "SYN_RECV", 4: "FIN_WAIT1", 5: "FIN_WAIT2", 6: "TIME_WAIT",
	7: "CLOSE", 8: "CLOSE_WAIT", 9: "LAST_ACK", 10: "LISTEN", 11: "CLOSING", 12: "NEW_SYN_RECV",
}

const (
	tcpEstablished = 1
	tcpTimeWait    = 6
	tcpListen      = 10
)

// parseTCP parses a tcp or tcp6 table.
func parseTCP(data []byte, family string) ([]tcpSocket, error) {
	var out []tcpSocket
	rest := data
	for line := 1; len(rest) > 0; line++ {
		var l []byte
		l, rest, _ = bytes.Cut(rest, []byte("\n"))
		f := bytes.Fields(l)
		if line == 1 || len(f) == 0 {
			continue // header
		}
		s, err := parseTCPRow(f, family)
		if err != nil {
			return out, lineErr(line, "%w", err)
		}
		out = append(out, s)
	}
	return out, nil
}

func parseTCPRow(f [][]byte, family string) (tcpSocket, error) {
	if len(f) < 10 {
		return tcpSocket{}, fmt.Errorf("%d fields, want at least 10", len(f))
	}
	s := tcpSocket{family: family}
	var err error
	var local []byte
	if local, s.localPort, err = splitHexAddr(f[1]); err != nil {
		return s, err
	}
	s.local = string(local)
	if _, s.remPort, err = splitHexAddr(f[2]); err != nil {
		return s, err
	}
	st, err := strconv.ParseUint(string(f[3]), 16, 8)
	if err != nil {
		return s, fmt.Errorf("state %q is not hex", f[3])
	}
	s.state = int(st)
	if s.inode, err = strconv.ParseUint(string(f[9]), 10, 64); err != nil {
		return s, fmt.Errorf("inode %q is not a number", f[9])
	}
	return s, nil
}

// splitHexAddr splits "0100007F:18EB" into the address hex and the port.
func splitHexAddr(b []byte) ([]byte, int, error) {
	i := bytes.IndexByte(b, ':')
	if i < 0 || (i != 8 && i != 32) {
		return nil, 0, fmt.Errorf("address %q is not HEX:PORT", b)
	}
	port, err := strconv.ParseUint(string(b[i+1:]), 16, 16)
	if err != nil {
		return nil, 0, fmt.Errorf("port in %q is not hex", b)
	}
	return b[:i], int(port), nil
}

// formatHexAddr turns the kernel's hex address into text ("127.0.0.1",
// "::").
func formatHexAddr(h string) string {
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return h
	}
	for i := 0; i+4 <= len(raw); i += 4 { // each 32-bit word is little-endian
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	addr, _ := netip.AddrFromSlice(raw)
	return addr.Unmap().String()
}

// tcpTables reads (once per network namespace) the tcp and tcp6 tables
// under dir ("/proc/net" or "/proc/PID/net"); the inspector's own
// namespace comes from sock_diag when it can (sock_diag.go).
// found is false when neither table exists.
func (r *reader) tcpTables(netns uint64, dir string) (socks []tcpSocket, found bool) {
	key := strconv.FormatUint(netns, 10)
	if netns == 0 {
		key = dir
	}
	if t, ok := r.tcpCache[key]; ok {
		return t.socks, t.found
	}
	var t tcpTable
	if netns != 0 && netns == r.selfNetNS {
		if t.socks, t.found = r.readSockDiag(); t.found {
			r.tcpCache[key] = t
			return t.socks, t.found
		}
	}
	for _, fam := range []string{"tcp", "tcp6"} {
		data, ok := r.file(dir + "/" + fam)
		if !ok {
			continue
		}
		socks, err := parseTCP(data, fam)
		if err != nil {
			r.fail(inFile(err, dir+"/"+fam))
		}
		t.socks, t.found = append(t.socks, socks...), true
	}
	r.tcpCache[key] = t
	return t.socks, t.found
}

// tcpTable is one namespace's sockets.
type tcpTable struct {
	socks []tcpSocket
	found bool
	err   error // why a sock_diag dump is missing (sock_diag_netns.go)
}

// summarizeTCP counts sockets by state and for the given ports.
func summarizeTCP(socks []tcpSocket, ports []int) *TCPSummary {
	sum := &TCPSummary{ByState: map[string]int{}}
	counts := map[int]*PortSockets{}
	for _, p := range ports {
		if counts[p] == nil {
			counts[p] = &PortSockets{Port: p}
		}
	}
	for _, s := range socks {
		name := tcpStates[s.state]
		if name == "" {
			name = fmt.Sprintf("0x%02X", s.state)
		}
		sum.ByState[name]++
		if c := counts[s.remPort]; c != nil {
			c.ToEstablished += b2i(s.state == tcpEstablished)
			c.ToTimeWait += b2i(s.state == tcpTimeWait)
			c.ToTimeWaitLoopback += b2i(s.state == tcpTimeWait && loopbackHex(s.local))
		}
		if c := counts[s.localPort]; c != nil {
			c.FromEstablished += b2i(s.state == tcpEstablished)
			c.FromTimeWait += b2i(s.state == tcpTimeWait)
		}
	}
	keys := make([]int, 0, len(counts))
	for p := range counts {
		keys = append(keys, p)
	}
	slices.Sort(keys)
	for _, p := range keys {
		sum.Ports = append(sum.Ports, *counts[p])
	}
	return sum
}

// loopbackHex says whether a socket's local address (kernel hex) is a
// loopback one: its peer is then on loopback too.
func loopbackHex(h string) bool {
	a, ok := hexToAddr(h)
	return ok && a.Unmap().IsLoopback()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readTCPProbe summarises the inspector's namespace: the listeners and
// the sockets of the ports of the Redis processes in it plus
// Options.Ports (TCPSummary.Scope "ports"), and each such process's
// connections by NIC.
func readTCPProbe(r *reader) error {
	ports := slices.Clone(r.opts.Ports)
	for _, p := range r.snap.Processes {
		if p.NetNSIsInspector {
			for _, l := range p.Listen {
				ports = append(ports, l.Port)
			}
		}
	}
	slices.Sort(ports)
	ports = slices.Compact(ports)
	socks, found := r.selfPortSockets(ports)
	if !found {
		return nil
	}
	r.snap.Net.TCP = summarizeTCP(socks, ports)
	r.snap.Net.TCP.Scope = "ports"
	for i := range r.snap.Processes {
		if p := &r.snap.Processes[i]; p.NetNSIsInspector {
			p.Traffic = processTraffic(r.snap, socks, p)
		}
	}
	return nil
}
