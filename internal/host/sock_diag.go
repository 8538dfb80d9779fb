package host

import (
	"encoding/binary"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// On the live machine the inspector's own network namespace's TCP sockets
// come from netlink sock_diag (what `ss -tan` uses: a binary dump of
// inet_diag_msg records), not from /proc/net/tcp, whose text the kernel
// formats and redline parses line by line (91 ms at 18,000 sockets). The
// dump has no file, so it is kept under the virtual path sockdiag/tcp: the
// 72-byte inet_diag_msg of each socket as the kernel sent it (attributes
// dropped, host-order fields stored little-endian); a capture writes it
// there and a fixture tree answers from it, or from /proc/net/tcp when it
// has none.
//
//	offset 0 family (2 or 10), 1 state, 4 sport (big-endian), 6 dport,
//	8 src (16 bytes, network order), 24 dst, 68 inode

const sockDiagPath = "/sockdiag/tcp"

// readSockDiag returns the inspector's namespace's TCP sockets from the
// sock_diag dump; found is false when there is none (a fixture tree
// without it, or a kernel that refuses the dump).
func (r *reader) readSockDiag() (socks []tcpSocket, found bool) {
	data, err := r.fs.readVirtual(sockDiagPath, dumpTCPSockDiag)
	if err != nil {
		return nil, false // /proc/net/tcp says the same, slower
	}
	socks, err = parseSockDiag(data)
	if err != nil {
		r.fail(inFile(err, sockDiagPath))
	}
	return socks, true
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
	out := make([]byte, 0, 2*len(b))
	for w := 0; w+4 <= len(b); w += 4 {
		for i := w + 3; i >= w; i-- {
			out = append(out, digits[b[i]>>4], digits[b[i]&15])
		}
	}
	return string(out)
}

// inet_diag_req_v2 and inet_diag_msg (include/uapi/linux/inet_diag.h).
const (
	inetDiagReqLen = 56
	inetDiagMsgLen = 72
)

// dumpTCPSockDiag dumps every TCP socket of the caller's network
// namespace, IPv4 then IPv6, into sockdiag/tcp records.
func dumpTCPSockDiag() ([]byte, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag: %w", err)
	}
	defer unix.Close(fd)
	var out []byte
	buf := make([]byte, 1<<16)
	for i, fam := range []uint8{unix.AF_INET, unix.AF_INET6} {
		if out, err = sockDiagDump(fd, fam, uint32(i+1), buf, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func sockDiagDump(fd int, family uint8, seq uint32, buf, out []byte) ([]byte, error) {
	req := make([]byte, unix.NLMSG_HDRLEN+inetDiagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	ne.PutUint32(req[8:], seq)
	req[16], req[17] = family, unix.IPPROTO_TCP
	ne.PutUint32(req[20:], 0xffffffff) // every state, as /proc/net/tcp lists them
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return out, fmt.Errorf("sock_diag: send: %w", err)
	}
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			return out, fmt.Errorf("sock_diag: receive: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return out, fmt.Errorf("sock_diag: %w", err)
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return out, nil
			case unix.NLMSG_ERROR:
				if len(m.Data) >= 4 {
					if errno := -int32(ne.Uint32(m.Data)); errno != 0 {
						return out, fmt.Errorf("sock_diag: %w", syscall.Errno(errno))
					}
				}
				return out, nil
			}
			if len(m.Data) >= inetDiagMsgLen {
				rec := m.Data[:inetDiagMsgLen]
				out = append(out, rec...)
				binary.LittleEndian.PutUint32(out[len(out)-4:], ne.Uint32(rec[68:]))
			}
		}
	}
}

// TCPPortUse counts the TCP sockets of the calling thread's network
// namespace (dumped through sock_diag, as ss does): inRange is those not
// listening whose local port is in [lo, hi] (the ephemeral ports in use,
// TIME_WAIT included), timeWait those in TIME_WAIT. Call it on a locked
// thread inside the namespace (netns.Do).
func TCPPortUse(lo, hi int) (inRange, timeWait int, err error) {
	data, err := dumpTCPSockDiag()
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
		if s.state != tcpListen && s.localPort >= lo && s.localPort <= hi {
			inRange++
		}
	}
	return inRange, timeWait, nil
}
