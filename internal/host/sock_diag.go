package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// On the live machine the inspector's own network namespace's TCP sockets
// come from netlink sock_diag (what `ss -tan` uses: a binary dump of
// inet_diag_msg records), not from /proc/net/tcp, whose text the kernel
// formats and redline parses line by line (91 ms at 18,000 sockets). Only
// the sockets the snapshot uses are dumped, filtered in the kernel: the
// listeners (a LISTEN-only dump walks the listening hash, not the
// established one), then the sockets of the ports of interest (Redis's
// listening ports, Options.Ports) through an inet_diag bytecode filter, so
// that 20,000 client sockets of other services cost the kernel's walk but
// no records. The dumps have no file, so they are kept under the virtual
// paths sockdiag/tcp-listen and sockdiag/tcp-ports: the 72-byte
// inet_diag_msg of each socket as the kernel sent it (attributes dropped,
// host-order fields stored little-endian); a capture writes them there and
// a fixture tree answers from them, or from sockdiag/tcp (an unfiltered
// dump, older captures) or /proc/net/tcp filtered the same way.
//
//	offset 0 family (2 or 10), 1 state, 4 sport (big-endian), 6 dport,
//	8 src (16 bytes, network order), 24 dst, 68 inode

const (
	sockDiagPath       = "/sockdiag/tcp"
	sockDiagListenPath = "/sockdiag/tcp-listen"
	sockDiagPortsPath  = "/sockdiag/tcp-ports"
)

// allStates selects every TCP state in a sock_diag request.
const allStates = 0xffffffff

// readSockDiag returns the inspector's namespace's TCP sockets from an
// unfiltered sock_diag dump; found is false when there is none (a fixture
// tree without it, or a kernel that refuses the dump).
func (r *reader) readSockDiag() (socks []tcpSocket, found bool) {
	return r.sockDiagAt(sockDiagPath, func() ([]byte, error) { return dumpTCPSockDiagPorts(allStates, nil) })
}

func (r *reader) sockDiagAt(vpath string, live func() ([]byte, error)) (socks []tcpSocket, found bool) {
	data, err := r.fs.readVirtual(vpath, live)
	if err != nil {
		return nil, false // the fallbacks say the same, slower
	}
	socks, err = parseSockDiag(data)
	if err != nil {
		r.fail(inFile(err, vpath))
	}
	return socks, true
}

// selfListeners returns the listening TCP sockets of the inspector's
// namespace (cached): a LISTEN-only dump, or the whole table filtered.
func (r *reader) selfListeners() []tcpSocket {
	if r.listeners != nil {
		return *r.listeners
	}
	socks, found := r.sockDiagAt(sockDiagListenPath, func() ([]byte, error) { return dumpTCPSockDiagPorts(1<<tcpListen, nil) })
	if !found {
		all, _ := r.tcpTables(r.selfNetNS, "/proc/net")
		socks = filterSockets(nil, all, true, nil)
	}
	r.listeners = &socks
	return socks
}

// selfPortSockets returns the inspector's namespace's listeners and the
// other sockets whose local or remote port is one of ports; found is false
// when no source lists the namespace's sockets.
func (r *reader) selfPortSockets(ports []int) (socks []tcpSocket, found bool) {
	listen := r.selfListeners()
	var rest []tcpSocket
	if len(ports) > 0 {
		rest, found = r.sockDiagAt(sockDiagPortsPath, func() ([]byte, error) { return r.dumpPorts(ports) })
	}
	if !found {
		all, ok := r.tcpTables(r.selfNetNS, "/proc/net")
		if !ok && len(listen) == 0 {
			return nil, false
		}
		rest = all
	}
	return filterSockets(append(make([]tcpSocket, 0, len(listen)+len(rest)), listen...), rest, false, ports), true
}

// portsPredump is the dump of the sockets of Options.Ports, taken while
// the processes are read and their fds scanned; done is closed when data
// and err are set.
type portsPredump struct {
	ports []int
	done  chan struct{}
	data  []byte
	err   error
}

// predumpPorts starts the dump of the sockets of Options.Ports on the live
// machine (6379 by default: most often Redis's own port); the port dump
// then only adds the Redis ports not among them. The socket is made here,
// on the reading thread, whose namespace is the inspector's (a caller may
// have entered another on a locked thread, and a new goroutine's thread
// is any of the process's); the dump itself, a walk of the host-wide
// established table however few sockets match, runs beside the whole
// Read until the "tcp" probe takes it.
func (r *reader) predumpPorts() {
	if !r.fs.live || len(r.opts.Ports) == 0 || r.predump != nil {
		return
	}
	pre := &portsPredump{ports: slices.Compact(slices.Sorted(slices.Values(r.opts.Ports))), done: make(chan struct{})}
	r.predump = pre
	fd, err := openSockDiag()
	if err != nil {
		pre.err = err
		close(pre.done)
		return
	}
	go func() {
		defer close(pre.done)
		defer unix.Close(fd)
		pre.data, pre.err = sockDiagDumpOn(fd, portStates, pre.ports)
	}()
}

// portStates are the states of the port dump: all but LISTEN (the
// listeners come from their own dump).
const portStates = allStates &^ (1 << tcpListen)

// dumpPorts dumps the sockets of ports, those of the predump's ports
// taken from it: the second dump is of the other ports, and leaves out a
// socket between one of them and a predumped port (counted already).
func (r *reader) dumpPorts(ports []int) ([]byte, error) {
	pre := r.predump
	if pre != nil {
		<-pre.done
	}
	if pre == nil || pre.err != nil {
		return dumpTCPSockDiagPorts(portStates, ports)
	}
	var more []int
	for _, p := range ports {
		if !slices.Contains(pre.ports, p) {
			more = append(more, p)
		}
	}
	if len(more) == 0 {
		return pre.data, nil
	}
	data, err := dumpTCPSockDiagPorts(portStates, more)
	if err != nil {
		return nil, err
	}
	data = filterRecords(data, func(sport, dport int) bool {
		return !slices.Contains(pre.ports, sport) && !slices.Contains(pre.ports, dport)
	})
	return append(slices.Clip(pre.data), data...), nil
}

// filterRecords keeps the sockdiag records whose ports keep accepts.
func filterRecords(data []byte, keep func(sport, dport int) bool) []byte {
	var out []byte
	for off := 0; off+inetDiagMsgLen <= len(data); off += inetDiagMsgLen {
		d := data[off : off+inetDiagMsgLen]
		if keep(int(binary.BigEndian.Uint16(d[4:])), int(binary.BigEndian.Uint16(d[6:]))) {
			out = append(out, d...)
		}
	}
	return out
}

// filterSockets appends to dst the listeners (listen) or the other
// sockets of the ports, as the kernel's filters keep them.
func filterSockets(dst, socks []tcpSocket, listen bool, ports []int) []tcpSocket {
	for _, s := range socks {
		if listen != (s.state == tcpListen) {
			continue
		}
		if listen || slices.Contains(ports, s.localPort) || slices.Contains(ports, s.remPort) {
			dst = append(dst, s)
		}
	}
	return dst
}

// parseSockDiag parses the sockdiag/tcp records.
func parseSockDiag(data []byte) ([]tcpSocket, error) {
	if len(data)%inetDiagMsgLen != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of %d-byte inet_diag_msg records", len(data), inetDiagMsgLen)
	}
	out := make([]tcpSocket, 0, len(data)/inetDiagMsgLen)
	for off := 0; off < len(data); off += inetDiagMsgLen {
		d := data[off : off+inetDiagMsgLen]
		s := tcpSocket{family: "tcp", localPort: int(binary.BigEndian.Uint16(d[4:])),
			remPort: int(binary.BigEndian.Uint16(d[6:])), state: int(d[1]), inode: uint64(binary.LittleEndian.Uint32(d[68:]))}
		words := 1
		switch d[0] {
		case unix.AF_INET:
		case unix.AF_INET6:
			s.family, words = "tcp6", 4
		default:
			return out, fmt.Errorf("record %d: family %d is neither AF_INET nor AF_INET6", off/inetDiagMsgLen, d[0])
		}
		s.local = procHexAddr(d[8 : 8+4*words])
		out = append(out, s)
	}
	return out, nil
}

// procHexAddr writes a network-order address as /proc/net/tcp does: each
// 32-bit word as the number a little-endian host reads from it ("%08X").
func procHexAddr(b []byte) string {
	const digits = "0123456789ABCDEF"
	var out [32]byte // one allocation per address: the string
	n := 0
	for w := 0; w+4 <= len(b) && n+8 <= len(out); w += 4 {
		for i := w + 3; i >= w; i-- {
			out[n], out[n+1] = digits[b[i]>>4], digits[b[i]&15]
			n += 2
		}
	}
	return string(out[:n])
}

// inet_diag_req_v2 and inet_diag_msg (include/uapi/linux/inet_diag.h).
const (
	inetDiagReqLen = 56
	inetDiagMsgLen = 72
)

// inet_diag_req (the request before v2): its dump walks the hash tables
// once for both families (sdiag_family AF_UNSPEC in the kernel), where a
// v2 request walks them once per family: the established table has a
// bucket per 4 KiB or so of memory (262,144 on a 24 GiB VM) besides its
// sockets, and its walk was half of a filtered dump's time.
const (
	tcpDiagGetSock = 18 // TCPDIAG_GETSOCK
	inetDiagReqV1  = 60
)

// sockDiagDumpBoth dumps the TCP sockets of both families in the given
// states that the bytecode accepts (nil: all) with one inet_diag_req.
func sockDiagDumpBoth(fd int, states uint32, bc []byte, buf, out []byte) ([]byte, error) {
	req := make([]byte, inetDiagReqV1)
	binary.NativeEndian.PutUint32(req[52:], states)
	return sockDiagDump(fd, tcpDiagGetSock, req, bc, buf, out)
}

// sockDiagDumpFiltered dumps the family's TCP sockets in the given states
// (a bit per TCP state) that the bytecode accepts (nil: all).
func sockDiagDumpFiltered(fd int, family uint8, states uint32, bc []byte, buf, out []byte) ([]byte, error) {
	req := make([]byte, inetDiagReqLen)
	req[0], req[1] = family, unix.IPPROTO_TCP
	binary.NativeEndian.PutUint32(req[4:], states)
	return sockDiagDump(fd, unix.SOCK_DIAG_BY_FAMILY, req, bc, buf, out)
}

// sockDiagDump sends a dump request (body, then the bytecode as its
// INET_DIAG_REQ_BYTECODE attribute) and appends the inet_diag_msg of each
// reply to out (netlinkDump: every receive has a deadline).
func sockDiagDump(fd int, typ uint16, body, bc, buf, out []byte) ([]byte, error) {
	ne := binary.NativeEndian
	if len(bc) > 0 {
		attr := make([]byte, unix.SizeofNlAttr, unix.SizeofNlAttr+len(bc))
		ne.PutUint16(attr[0:], uint16(unix.SizeofNlAttr+len(bc)))
		ne.PutUint16(attr[2:], inetDiagReqBytecode)
		body = append(append(slices.Clip(body), attr...), bc...)
	}
	err := netlinkDump(fd, "sock_diag", netlinkRequest(typ, body), buf, func(_ uint16, data []byte) {
		if len(data) >= inetDiagMsgLen {
			out = append(out, data[:inetDiagMsgLen]...)
			binary.LittleEndian.PutUint32(out[len(out)-4:], ne.Uint32(data[68:]))
		}
	})
	return out, err
}

// The inet_diag bytecode (include/uapi/linux/inet_diag.h): each op is
// {code, yes, no}; the kernel follows yes or no by the op's result and
// keeps a socket that lands exactly on the end.
const (
	inetDiagReqBytecode = 1 // INET_DIAG_REQ_BYTECODE
	inetDiagBcJmp       = 1
	inetDiagBcSEq       = 11 // Linux 4.17+
	inetDiagBcDEq       = 12
)

// portsBytecode accepts a socket whose local or remote port is one of
// ports: "sport == p0 || dport == p0 || sport == p1 ...", laid out as ss
// lays out its ORs (each test jumps past the rest when true; the last
// one's false jumps 4 bytes past the end, which rejects).
func portsBytecode(ports []int) []byte {
	type cond struct {
		code uint8
		port uint16
	}
	var conds []cond
	for _, p := range ports {
		conds = append(conds, cond{inetDiagBcSEq, uint16(p)}, cond{inetDiagBcDEq, uint16(p)})
	}
	ne := binary.NativeEndian
	var bc []byte
	// built from the last test back: OR(c, rest) = c{yes 8, no 12}, JMP{yes 4, no len(rest)+4}, rest
	for i := len(conds) - 1; i >= 0; i-- {
		op := make([]byte, 8)
		op[0] = conds[i].code
		op[1] = 8
		ne.PutUint16(op[2:], 12)
		ne.PutUint16(op[6:], conds[i].port)
		if len(bc) == 0 {
			bc = op
			continue
		}
		jmp := make([]byte, 4)
		jmp[0], jmp[1] = inetDiagBcJmp, 4
		ne.PutUint16(jmp[2:], uint16(len(bc)+4))
		bc = append(append(op, jmp...), bc...)
	}
	return bc
}

// dumpTCPSockDiagPorts dumps the caller's namespace's TCP sockets in
// states (a bit per state), IPv4 then IPv6, of the ports (nil: all) into
// sockdiag records, through a socket of its own (sockDiagDumpOn).
func dumpTCPSockDiagPorts(states uint32, ports []int) ([]byte, error) {
	fd, err := openSockDiag()
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	return sockDiagDumpOn(fd, states, ports)
}

// openSockDiag creates a NETLINK_SOCK_DIAG socket in the calling thread's
// network namespace (it dumps that namespace's sockets whichever thread
// uses it later), every receive bounded by netlinkTimeout.
func openSockDiag() (int, error) {
	return openNetlink(unix.NETLINK_SOCK_DIAG, "sock_diag")
}

// sockDiagDumpOn dumps through the sock_diag socket fd the TCP sockets of
// its namespace in states, of the ports (nil: all), into sockdiag
// records. A kernel before 4.17 refuses the port test (EINVAL): then
// every socket in those states is dumped and filtered here. After an
// error the socket may still hold part of a reply: do not reuse it.
func sockDiagDumpOn(fd int, states uint32, ports []int) ([]byte, error) {
	buf := make([]byte, 1<<20) // the kernel sends up to 32 KiB a message; a dump is many
	bc := portsBytecode(ports)
	out, err := sockDiagDumpBoth(fd, states, bc, buf, nil)
	if err == nil || !refusedRequest(err) {
		return out, err // a dump that failed part-way: no fallback on this socket
	}
	out = nil // a kernel without TCPDIAG_GETSOCK: a dump per family
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		if out, err = sockDiagDumpFiltered(fd, fam, states, bc, buf, out); err != nil {
			if bc != nil && errors.Is(err, syscall.EINVAL) {
				return dumpPortsFilteredHere(fd, states, ports)
			}
			return nil, err
		}
	}
	return out, nil
}

// refusedRequest reports whether the kernel refused a dump request as a
// whole (an unknown type or attribute), so that nothing of it is left on
// the socket and another request may follow.
func refusedRequest(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.EOPNOTSUPP)
}

// dumpPortsFilteredHere is the port filter for kernels without S_EQ/D_EQ.
func dumpPortsFilteredHere(fd int, states uint32, ports []int) ([]byte, error) {
	data, err := sockDiagDumpOn(fd, states, nil)
	if err != nil {
		return nil, err
	}
	return filterRecords(data, func(sport, dport int) bool {
		return slices.Contains(ports, sport) || slices.Contains(ports, dport)
	}), nil
}

// TCPPortUse counts the TCP sockets of the calling thread's network
// namespace (dumped through sock_diag, as ss does): inRange is those not
// listening whose local port is in [lo, hi] (the ephemeral ports in use,
// TIME_WAIT included), timeWait those in TIME_WAIT. Call it on a locked
// thread inside the namespace (netns.Do).
func TCPPortUse(lo, hi int) (inRange, timeWait int, err error) {
	data, err := dumpTCPSockDiagPorts(allStates&^(1<<tcpListen), nil)
	if err != nil {
		return 0, 0, err
	}
	socks, err := parseSockDiag(data)
	if err != nil {
		return 0, 0, err
	}
	for _, s := range socks {
		if s.state == tcpTimeWait {
			timeWait++
		}
		if s.localPort >= lo && s.localPort <= hi {
			inRange++
		}
	}
	return inRange, timeWait, nil
}
