package kernel

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNetlinkDumpOnABusySocket: a dump left unread on a socket (an earlier
// dump that stopped on a timeout) is never mixed into the next one: the
// kernel refuses the second dump (EBUSY), and the error says so instead of
// a partial or doubled result. Replies of another sequence number are
// skipped besides.
func TestNetlinkDumpOnABusySocket(t *testing.T) {
	fd, err := openNetlink(unix.NETLINK_ROUTE, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	stale := netlinkRequest(unix.RTM_GETLINK, make([]byte, unix.SizeofIfInfomsg))
	stale[8], stale[9], stale[10], stale[11] = 0xff, 0xff, 0xff, 0x7f
	if err := unix.Sendto(fd, stale, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		t.Fatal(err)
	}
	links := 0
	req := netlinkRequest(unix.RTM_GETLINK, make([]byte, unix.SizeofIfInfomsg))
	err = netlinkDump(fd, "test", req, make([]byte, 64<<10), func(typ uint16, _ []byte) { links++ })
	if err == nil || links != 0 {
		t.Fatalf("a dump on a socket with a dump in progress: %d messages, error %v; want none and an error", links, err)
	}
	if refusedRequest(err) {
		t.Fatalf("%v counts as a refused request, which would let sock_diag fall back on this socket", err)
	}
	// a new socket dumps every link once
	fd2, err := openNetlink(unix.NETLINK_ROUTE, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd2)
	if err := netlinkDump(fd2, "test", req, make([]byte, 64<<10), func(typ uint16, _ []byte) {
		if typ == unix.RTM_NEWLINK {
			links++
		}
	}); err != nil {
		t.Fatal(err)
	}
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	if links != len(ifs) {
		t.Fatalf("%d links dumped, want %d", links, len(ifs))
	}
}
