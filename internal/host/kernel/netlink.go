package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The netlink dumps of the live machine (sock_diag's TCP sockets,
// rtnetlink's links and addresses) share one socket setup and one
// receive loop: every receive has a deadline, and a malformed or
// failed reply is an error, not a hang.

// netlinkTimeout bounds each wait for a netlink reply.
const netlinkTimeout = 5 * time.Second

// openNetlink creates a netlink socket of proto (NETLINK_SOCK_DIAG,
// NETLINK_ROUTE) in the calling thread's network namespace, every receive
// bounded by netlinkTimeout. what names it in errors.
func openNetlink(proto int, what string) (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return -1, fmt.Errorf("%s: %w", what, err)
	}
	tv := unix.NsecToTimeval(netlinkTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("%s: %w", what, err)
	}
	return fd, nil
}

// netlinkSeq numbers the dumps of this process: a reply carries its
// request's number, so what an earlier dump on the same socket left
// unread (it stopped on a timeout or an error) is told apart and skipped.
var netlinkSeq atomic.Uint32

// netlinkDump sends req (a whole message, header first, flagged
// NLM_F_DUMP) on fd and calls each with the type and body of every reply
// message until the dump ends. buf is the receive buffer. The request is
// given a fresh sequence number; replies with another are skipped.
func netlinkDump(fd int, what string, req, buf []byte, each func(typ uint16, data []byte)) error {
	ne := binary.NativeEndian
	seq := netlinkSeq.Add(1)
	ne.PutUint32(req[8:], seq)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("%s: send: %w", what, err)
	}
	for {
		n, _, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			switch {
			case errors.Is(err, unix.EINTR):
				continue // a signal: a receive with SO_RCVTIMEO is not restarted
			case errors.Is(err, unix.EAGAIN):
				err = fmt.Errorf("no reply within %v: %w", netlinkTimeout, err)
			case errors.Is(err, unix.ENOBUFS):
				err = fmt.Errorf("the kernel dropped replies, the dump is incomplete: %w", err)
			}
			return fmt.Errorf("%s: receive: %w", what, err)
		}
		for msg := buf[:n]; len(msg) >= unix.NLMSG_HDRLEN; {
			l := int(ne.Uint32(msg[0:]))
			if l < unix.NLMSG_HDRLEN || l > len(msg) {
				return fmt.Errorf("%s: a %d-byte message in %d bytes", what, l, len(msg))
			}
			data := msg[unix.NLMSG_HDRLEN:l]
			typ, mseq := ne.Uint16(msg[4:]), ne.Uint32(msg[8:])
			msg = msg[min((l+unix.NLMSG_ALIGNTO-1)&^(unix.NLMSG_ALIGNTO-1), len(msg)):]
			if mseq != seq {
				continue // left over from an earlier dump on this socket
			}
			switch typ {
			case unix.NLMSG_DONE, unix.NLMSG_ERROR:
				// both carry an errno: a dump that ended on an error is
				// not a complete dump
				if len(data) >= 4 {
					if errno := -int32(ne.Uint32(data)); errno > 0 {
						return fmt.Errorf("%s: %w", what, syscall.Errno(errno))
					}
				}
				return nil
			default:
				each(typ, data)
			}
		}
	}
}

// netlinkRequest is a dump request: the header, then body (netlinkDump
// gives it its sequence number).
func netlinkRequest(typ uint16, body []byte) []byte {
	ne := binary.NativeEndian
	req := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(body))
	ne.PutUint16(req[4:], typ)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	req = append(req, body...)
	ne.PutUint32(req[0:], uint32(len(req)))
	return req
}

// netlinkAttrs calls each with the type (flags masked) and value of every
// attribute in b.
func netlinkAttrs(b []byte, each func(typ uint16, val []byte)) {
	ne := binary.NativeEndian
	for len(b) >= unix.SizeofNlAttr {
		l := int(ne.Uint16(b[0:]))
		if l < unix.SizeofNlAttr || l > len(b) {
			return
		}
		each(ne.Uint16(b[2:])&^(unix.NLA_F_NESTED|unix.NLA_F_NET_BYTEORDER), b[unix.SizeofNlAttr:l])
		b = b[min((l+unix.NLA_ALIGNTO-1)&^(unix.NLA_ALIGNTO-1), len(b)):]
	}
}
