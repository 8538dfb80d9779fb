package host

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"redline/internal/netns"
)

// A Redis in another network namespace (a container) has its sockets
// dumped through sock_diag inside that namespace, as the inspector's own
// are (sock_diag.go), not read from the text of /proc/PID/net/tcp and
// tcp6 (77-150 ms of CPU at 20,000 sockets): a netlink socket belongs to
// the namespace it was created in, so a locked thread enters the
// namespace (netns.Do: setns, and back), creates the NETLINK_SOCK_DIAG
// socket there and leaves; the dumps then run through that socket from
// the reader's thread. One socket per namespace inode per Read. The
// dumps are kept under the namespace's virtual paths, as its sysctls are:
//
//	netns/4026532291/sockdiag/tcp-listen          the namespace's listeners
//	netns/4026532291/sockdiag/tcp-ports-6379,6380 the other sockets of those ports
//
// Without sock_diag there (no CAP_SYS_ADMIN to enter the namespace, the
// process ended or was replaced, a tree captured without it) the tables
// of /proc/PID/net are read as before; the summary's Source says which
// was used and why.

// nsDiag is the sock_diag socket of one namespace, or (err set) why there
// is none: fd is open exactly when err is nil.
type nsDiag struct {
	fd  int
	err error
}

// nsSockDiag returns the sock_diag socket of pid's network namespace ino,
// created on first use.
func (r *reader) nsSockDiag(pid int, ino uint64) (int, error) {
	d, ok := r.nsDiags[ino]
	if !ok {
		d = &nsDiag{}
		d.fd, d.err = openSockDiagIn(pid, ino)
		r.nsDiags[ino] = d
	}
	return d.fd, d.err
}

// nsDiagFailed retires the namespace's socket after a failed dump (it
// may still hold part of the reply): later dumps fall back with err.
func (r *reader) nsDiagFailed(ino uint64, err error) {
	if d := r.nsDiags[ino]; d != nil && d.err == nil {
		unix.Close(d.fd)
		d.err = err
	}
}

// closeNSDiags closes the namespaces' sockets at the end of a Read.
func (r *reader) closeNSDiags() {
	for _, d := range r.nsDiags {
		if d.err == nil {
			unix.Close(d.fd)
		}
	}
	r.nsDiags = nil
}

// nsDiagHook, when set (tests), runs before the namespace of pid is
// entered.
var nsDiagHook func(pid int)

// openSockDiagIn creates a sock_diag socket inside the network namespace
// of pid, which must still be ino: a pid reused since ns/net was read
// names another namespace, and its sockets are not the process's. A
// socket made there is kept even when the thread could not come back
// (netns.Do retires that thread; the socket stays in the namespace it
// was made in), as liveReadInNetns keeps what it read.
func openSockDiagIn(pid int, ino uint64) (int, error) {
	if nsDiagHook != nil {
		nsDiagHook(pid)
	}
	fd := -1
	err := netns.Do(netns.PidPath(pid), func() error {
		var st unix.Stat_t
		if err := unix.Stat("/proc/thread-self/ns/net", &st); err != nil {
			return fmt.Errorf("the namespace entered: %w", err)
		}
		if st.Ino != ino {
			return fmt.Errorf("/proc/%d/ns/net is now namespace %d, not %d (the process was replaced)", pid, st.Ino, ino)
		}
		var err error
		fd, err = openSockDiag()
		return err
	})
	if fd >= 0 {
		return fd, nil
	}
	return -1, fmt.Errorf("sock_diag in the network namespace of pid %d: %w", pid, err)
}

// nsSockDiagAt dumps (live) or reads (a tree) a namespace's dump at the
// namespace's virtual path; err says why there is none.
func (r *reader) nsSockDiagAt(pid int, ino uint64, name string, states uint32, ports []int) ([]tcpSocket, error) {
	vpath := netnsPath(ino, "/sockdiag/"+name)
	data, err := r.fs.readVirtual(vpath, func() ([]byte, error) {
		fd, err := r.nsSockDiag(pid, ino)
		if err != nil {
			return nil, err
		}
		data, err := sockDiagDumpOn(fd, states, ports)
		if err != nil {
			r.nsDiagFailed(ino, err)
		}
		return data, err
	})
	if err != nil {
		if !r.fs.live && isAbsent(err) {
			err = fmt.Errorf("no %s in this tree", strings.TrimPrefix(vpath, "/"))
		}
		return nil, err
	}
	socks, err := parseSockDiag(data)
	if err != nil {
		r.fail(inFile(err, vpath))
	}
	return socks, nil
}

// nsListeners returns the listeners of another namespace (cached per
// namespace): a LISTEN-only dump inside it.
func (r *reader) nsListeners(pid int, ino uint64) ([]tcpSocket, error) {
	key := "listen " + strconv.FormatUint(ino, 10)
	if t, ok := r.tcpCache[key]; ok {
		return t.socks, t.err
	}
	socks, err := r.nsSockDiagAt(pid, ino, "tcp-listen", 1<<tcpListen, nil)
	r.tcpCache[key] = tcpTable{socks: socks, found: err == nil, err: err}
	return socks, err
}

// nsPortSockets returns another namespace's listeners and the other
// sockets of ports, dumped inside it (filtered in the kernel).
func (r *reader) nsPortSockets(pid int, ino uint64, listen []tcpSocket, ports []int) ([]tcpSocket, error) {
	ports = slices.Compact(slices.Sorted(slices.Values(ports)))
	var rest []tcpSocket
	if len(ports) > 0 {
		names := make([]string, len(ports))
		for i, p := range ports {
			names[i] = strconv.Itoa(p)
		}
		var err error
		if rest, err = r.nsSockDiagAt(pid, ino, "tcp-ports-"+strings.Join(names, ","), portStates, ports); err != nil {
			return nil, err
		}
	}
	return filterSockets(append(make([]tcpSocket, 0, len(listen)+len(rest)), listen...), rest, false, ports), nil
}
