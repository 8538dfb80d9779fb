package host

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"redline/internal/host/kernel"
)

// A Redis in another network namespace (a container) has its sockets
// dumped through sock_diag inside that namespace, as the inspector's own
// are (sock_diag.go), not read from the text of /proc/PID/net/tcp and
// tcp6 (77-150 ms of CPU at 20,000 sockets): a netlink socket belongs to
// the namespace it was created in, so a locked thread enters the
// namespace (netns.Do: setns, and back), creates the NETLINK_SOCK_DIAG
// socket there and leaves (kernel.Live.OpenSockDiagIn); the dumps then run
// through that socket from the reader's thread. One socket per namespace inode per Read. The
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
// is none: diag is open exactly when err is nil. Two redis-servers of one
// namespace share it, so a dump holds mu.
type nsDiag struct {
	mu   sync.Mutex
	diag kernel.SockDiag
	err  error
}

// nsSockDiag returns the sock_diag socket of pid's network namespace ino,
// created on first use (on the reading thread).
func (r *reader) nsSockDiag(pid int, ino uint64) *nsDiag {
	d, ok := r.nsDiags[ino]
	if !ok {
		d = &nsDiag{}
		d.diag, d.err = r.fs.kernel.OpenSockDiagIn(pid, ino)
		r.nsDiags[ino] = d
	}
	return d
}

// dump runs one dump on the namespace's socket. A failed
// dump retires the socket, which may still hold part of the reply: the
// later dumps fail with its error.
func (d *nsDiag) dump(states uint32, ports []int) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return nil, d.err
	}
	data, err := d.diag.Dump(states, ports)
	if err != nil {
		d.diag.Close()
		d.err = err
	}
	return data, err
}

// closeNSDiags closes the namespaces' sockets at the end of a Read, when
// every dump started has been waited for.
func (r *reader) closeNSDiags() {
	for _, d := range r.nsDiags {
		d.mu.Lock()
		if d.err == nil {
			d.diag.Close()
			d.err = errors.New("closed")
		}
		d.mu.Unlock()
	}
	r.nsDiags = nil
}

// nsSockDiagAt dumps (live) or reads (a tree) a namespace's dump at the
// namespace's virtual path; err says why there is none.
func (r *reader) nsSockDiagAt(pid int, ino uint64, name string, states uint32, ports []int) ([]tcpSocket, error) {
	return r.startNSSockDiagAt(pid, ino, name, states, ports).wait(r)
}

// nsDump is a namespace's dump, under way or done.
type nsDump struct {
	vpath string
	done  chan struct{}
	data  []byte
	err   error
	socks *[]tcpSocket // data parsed, by the first wait (on the reader's thread)
}

// startNSSockDiagAt starts nsSockDiagAt's dump. On the live machine (not
// recording) it runs beside the reader through the namespace's socket,
// made here; a tree is read at once.
func (r *reader) startNSSockDiagAt(pid int, ino uint64, name string, states uint32, ports []int) *nsDump {
	vpath := netnsPath(ino, "/sockdiag/"+name)
	if d := r.nsDumps[vpath]; d != nil {
		return d // a second server of the namespace: the same dump
	}
	d := &nsDump{vpath: vpath, done: make(chan struct{})}
	r.nsDumps[vpath] = d
	var diag *nsDiag
	if r.fs.live {
		diag = r.nsSockDiag(pid, ino)
	}
	dump := func() {
		defer close(d.done)
		d.data, d.err = r.fs.readVirtual(d.vpath, func() ([]byte, error) { return diag.dump(states, ports) })
	}
	if r.fs.live && !r.fs.recording {
		go dump()
	} else {
		dump()
	}
	return d
}

// wait returns the dump's sockets once it is done.
func (d *nsDump) wait(r *reader) ([]tcpSocket, error) {
	<-d.done
	if err := d.err; err != nil {
		if !r.fs.live && isAbsent(err) {
			err = fmt.Errorf("no %s in this tree", strings.TrimPrefix(d.vpath, "/"))
		}
		return nil, err
	}
	if d.socks == nil {
		socks, err := parseSockDiag(d.data)
		if err != nil {
			r.fail(inFile(err, d.vpath)) // once, however many servers share the dump
		}
		d.socks = &socks
	}
	return *d.socks, nil
}

// nsListeners returns the listeners of another namespace: a LISTEN-only
// dump inside it, once per Read (r.nsDumps).
func (r *reader) nsListeners(pid int, ino uint64) ([]tcpSocket, error) {
	return r.nsSockDiagAt(pid, ino, "tcp-listen", 1<<tcpListen, nil)
}

// nsPortSockets returns another namespace's listeners and the other
// sockets of ports, dumped inside it (filtered in the kernel).
func (r *reader) nsPortSockets(pid int, ino uint64, listen []tcpSocket, ports []int) ([]tcpSocket, error) {
	return r.startNSPortSockets(pid, ino, ports).sockets(r, listen, ports)
}

// startNSPortSockets starts the dump of the sockets of ports inside
// another namespace (nil when there are no ports).
func (r *reader) startNSPortSockets(pid int, ino uint64, ports []int) *nsDump {
	ports = slices.Compact(slices.Sorted(slices.Values(ports)))
	if len(ports) == 0 {
		return nil
	}
	names := make([]string, len(ports))
	for i, p := range ports {
		names[i] = strconv.Itoa(p)
	}
	return r.startNSSockDiagAt(pid, ino, "tcp-ports-"+strings.Join(names, ","), portStates, ports)
}

// sockets returns listen and the other sockets of ports the dump holds
// (it may have dumped more ports).
func (d *nsDump) sockets(r *reader, listen []tcpSocket, ports []int) ([]tcpSocket, error) {
	var rest []tcpSocket
	if d != nil {
		var err error
		if rest, err = d.wait(r); err != nil {
			return nil, err
		}
	}
	return filterSockets(append(make([]tcpSocket, 0, len(listen)+len(rest)), listen...), rest, false, ports), nil
}

// listenPorts returns the ports of the LISTEN sockets among socks.
func listenPorts(socks []tcpSocket) []int {
	var ports []int
	for _, s := range socks {
		if s.state == tcpListen {
			ports = append(ports, s.localPort)
		}
	}
	return ports
}
