package host

import (
	"encoding/binary"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"redline/internal/host/kernel"
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
// no records (kernel.SockDiag). The dumps have no file, so they are kept
// under the virtual paths sockdiag/tcp-listen and sockdiag/tcp-ports: the
// 72-byte inet_diag_msg of each socket as the kernel sent it (attributes
// dropped, host-order fields stored little-endian); a capture writes them there and
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
	return r.sockDiagAt(sockDiagPath, func() ([]byte, error) { return dumpTCP(r.fs.kernel, allStates, nil) })
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
	socks, found := r.sockDiagAt(sockDiagListenPath, func() ([]byte, error) { return dumpTCP(r.fs.kernel, 1<<tcpListen, nil) })
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
	diag, err := r.fs.kernel.OpenSockDiag()
	if err != nil {
		pre.err = err
		close(pre.done)
		return
	}
	go func() {
		defer close(pre.done)
		defer diag.Close()
		pre.data, pre.err = diag.Dump(portStates, pre.ports)
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
		return dumpTCP(r.fs.kernel, portStates, ports)
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
	data, err := dumpTCP(r.fs.kernel, portStates, more)
	if err != nil {
		return nil, err
	}
	data = kernel.FilterRecords(data, func(sport, dport int) bool {
		return !slices.Contains(pre.ports, sport) && !slices.Contains(pre.ports, dport)
	})
	return append(slices.Clip(pre.data), data...), nil
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
	if len(data)%kernel.RecordLen != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of %d-byte inet_diag_msg records", len(data), kernel.RecordLen)
	}
	out := make([]tcpSocket, 0, len(data)/kernel.RecordLen)
	for off := 0; off < len(data); off += kernel.RecordLen {
		d := data[off : off+kernel.RecordLen]
		s := tcpSocket{family: "tcp", localPort: int(binary.BigEndian.Uint16(d[4:])),
			remPort: int(binary.BigEndian.Uint16(d[6:])), state: int(d[1]), inode: uint64(binary.LittleEndian.Uint32(d[68:]))}
		words := 1
		switch d[0] {
		case unix.AF_INET:
		case unix.AF_INET6:
			s.family, words = "tcp6", 4
		default:
			return out, fmt.Errorf("record %d: family %d is neither AF_INET nor AF_INET6", off/kernel.RecordLen, d[0])
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

// dumpTCP dumps the calling thread's namespace's TCP sockets in states
// (a bit per state), of the ports (nil: all), into sockdiag records,
// through a sock_diag socket of its own.
func dumpTCP(k kernel.Interface, states uint32, ports []int) ([]byte, error) {
	diag, err := k.OpenSockDiag()
	if err != nil {
		return nil, err
	}
	defer diag.Close()
	return diag.Dump(states, ports)
}

// TCPPortUse counts the TCP sockets of the calling thread's network
// namespace (dumped through sock_diag, as ss does): inRange is those not
// listening whose local port is in [lo, hi] (the ephemeral ports in use,
// TIME_WAIT included), timeWait those in TIME_WAIT. Call it on a locked
// thread inside the namespace (netns.Do).
func TCPPortUse(lo, hi int) (inRange, timeWait int, err error) {
	data, err := dumpTCP(kernel.Live{}, allStates&^(1<<tcpListen), nil)
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
