package kernel

import (
	"encoding/binary"
	"errors"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"
)

// A sock_diag dump (what `ss -tan` uses) gives the TCP sockets of the
// socket's network namespace as inet_diag_msg records, filtered in the
// kernel by state and by an inet_diag bytecode on the ports, so that
// 20,000 client sockets of other services cost the kernel's walk but no
// records. Dump returns them as Records: the 72-byte inet_diag_msg of each
// socket as the kernel sent it (attributes dropped, host-order fields
// stored little-endian), the format host parses and a capture keeps:
//
//	offset 0 family (2 or 10), 1 state, 4 sport (big-endian), 6 dport,
//	8 src (16 bytes, network order), 24 dst, 68 inode

// RecordLen is the length of one record (struct inet_diag_msg).
const RecordLen = 72

// inet_diag_req_v2 (include/uapi/linux/inet_diag.h).
const inetDiagReqLen = 56

// inet_diag_req (the request before v2): its dump walks the hash tables
// once for both families (sdiag_family AF_UNSPEC in the kernel), where a
// v2 request walks them once per family: the established table has a
// bucket per 4 KiB or so of memory (262,144 on a 24 GiB VM) besides its
// sockets, and its walk was half of a filtered dump's time.
const (
	tcpDiagGetSock = 18 // TCPDIAG_GETSOCK
	inetDiagReqV1  = 60
)

// sockDiag is a NETLINK_SOCK_DIAG socket.
type sockDiag struct{ fd int }

// OpenSockDiag creates a NETLINK_SOCK_DIAG socket in the calling thread's
// network namespace (it dumps that namespace's sockets whichever thread
// uses it later), every receive bounded by netlinkTimeout.
func (Live) OpenSockDiag() (SockDiag, error) {
	fd, err := openNetlink(unix.NETLINK_SOCK_DIAG, "sock_diag")
	if err != nil {
		return nil, err
	}
	return &sockDiag{fd}, nil
}

func (s *sockDiag) Close() error { return unix.Close(s.fd) }

// Dump dumps the TCP sockets of the socket's namespace in states, of the
// ports (nil: all), into Records. A kernel before 4.17 refuses the port
// test (EINVAL): then every socket in those states is dumped and filtered
// here. After an error the socket may still hold part of a reply: do not
// reuse it.
func (s *sockDiag) Dump(states uint32, ports []int) ([]byte, error) {
	buf := make([]byte, 1<<20) // the kernel sends up to 32 KiB a message; a dump is many
	bc := portsBytecode(ports)
	out, err := sockDiagDumpBoth(s.fd, states, bc, buf, nil)
	if err == nil || !refusedRequest(err) {
		return out, err // a dump that failed part-way: no fallback on this socket
	}
	out = nil // a kernel without TCPDIAG_GETSOCK: a dump per family
	for _, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		if out, err = sockDiagDumpFiltered(s.fd, fam, states, bc, buf, out); err != nil {
			if bc != nil && errors.Is(err, syscall.EINVAL) {
				return s.dumpFilteredHere(states, ports)
			}
			return nil, err
		}
	}
	return out, nil
}

// dumpFilteredHere is the port filter for kernels without S_EQ/D_EQ.
func (s *sockDiag) dumpFilteredHere(states uint32, ports []int) ([]byte, error) {
	data, err := s.Dump(states, nil)
	if err != nil {
		return nil, err
	}
	return FilterRecords(data, func(sport, dport int) bool {
		return slices.Contains(ports, sport) || slices.Contains(ports, dport)
	}), nil
}

// FilterRecords keeps the records whose ports keep accepts.
func FilterRecords(data []byte, keep func(sport, dport int) bool) []byte {
	var out []byte
	for off := 0; off+RecordLen <= len(data); off += RecordLen {
		d := data[off : off+RecordLen]
		if keep(int(binary.BigEndian.Uint16(d[4:])), int(binary.BigEndian.Uint16(d[6:]))) {
			out = append(out, d...)
		}
	}
	return out
}

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
		if len(data) >= RecordLen {
			out = append(out, data[:RecordLen]...)
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

// refusedRequest reports whether the kernel refused a dump request as a
// whole (an unknown type or attribute), so that nothing of it is left on
// the socket and another request may follow.
func refusedRequest(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.EOPNOTSUPP)
}
