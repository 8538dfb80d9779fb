package host

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"sync"
	"testing"

	"redline/internal/host/kernel"
	"redline/internal/netns"
	"redline/internal/testutil"
	"redline/internal/testutil/fdtest"
)

// diagRecord builds an inet_diag_msg record as sockdiag/tcp stores it.
func diagRecord(family, state byte, src []byte, sport, dport uint16, inode uint32) []byte {
	d := make([]byte, kernel.RecordLen)
	d[0], d[1] = family, state
	binary.BigEndian.PutUint16(d[4:], sport)
	binary.BigEndian.PutUint16(d[6:], dport)
	copy(d[8:], src)
	binary.LittleEndian.PutUint32(d[68:], inode)
	return d
}

func TestParseSockDiag(t *testing.T) {
	data := append(diagRecord(2, 1, []byte{127, 0, 0, 1}, 6379, 54000, 22220),
		diagRecord(10, 10, net.ParseIP("::1"), 6379, 0, 22221)...)
	got, err := parseSockDiag(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []tcpSocket{
		{family: "tcp", local: "0100007F", localPort: 6379, remPort: 54000, state: tcpEstablished, inode: 22220},
		{family: "tcp6", local: "00000000000000000000000001000000", localPort: 6379, state: tcpListen, inode: 22221},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if formatHexAddr(got[1].local) != "::1" {
		t.Errorf("%s reads as %s", got[1].local, formatHexAddr(got[1].local))
	}
	for _, bad := range [][]byte{data[:70], diagRecord(1, 1, nil, 1, 1, 1)} {
		if _, err := parseSockDiag(bad); err == nil {
			t.Errorf("parseSockDiag(%d bytes, family %d): no error", len(bad), bad[0])
		}
	}
}

// sock_diag and /proc/net/tcp agree on a listener and its connections.
func TestLiveSockDiagMatchesProcNetTCP(t *testing.T) {
	liveFS(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	fdtest.Connect(t, ln)
	data, err := dumpTCP(kernel.Live{}, allStates, nil)
	if err != nil {
		t.Skipf("sock_diag unavailable here: %v", err)
	}
	diag, err := parseSockDiag(data)
	if err != nil {
		t.Fatal(err)
	}
	var proc []tcpSocket
	for _, fam := range []string{"tcp", "tcp6"} {
		text, err := readAll("/proc/net/" + fam)
		if err != nil {
			t.Fatal(err)
		}
		socks, err := parseTCP(text, fam)
		if err != nil {
			t.Fatal(err)
		}
		proc = append(proc, socks...)
	}
	ours := func(socks []tcpSocket) []tcpSocket {
		var out []tcpSocket
		for _, s := range socks {
			if s.localPort == port || s.remPort == port {
				out = append(out, s)
			}
		}
		slices.SortFunc(out, func(a, b tcpSocket) int { return int(a.inode) - int(b.inode) })
		return out
	}
	d, p := ours(diag), ours(proc)
	if len(d) != 3 || !slices.Equal(d, p) {
		t.Errorf("port %d:\nsock_diag    %+v\n/proc/net/tcp %+v", port, d, p)
	}
}

// BenchmarkLiveSnapshotTCP20k times a live snapshot (the inspect path)
// in a network namespace of its own holding at least 20,000 loopback TCP
// sockets: 9,500 open connections (both ends, 19,000 file descriptors:
// RLIMIT_NOFILE is raised) and 1,000 in TIME_WAIT (which hold none). It
// needs root (ip netns add); the namespace keeps other work's sockets out.
//
//	go test ./internal/host -run XXX -bench LiveSnapshotTCP -benchtime 10x
//
// "redis-port" is a Redis host whose 20,000 sockets are its clients (the
// port of interest: every socket is dumped), "other-port" one whose
// 20,000 sockets belong to another service (the kernel filters them out);
// "snapshot-redis-other-netns" is the redis-port Redis seen from another
// namespace (a container's Redis seen from the host: its sockets are
// dumped inside its namespace); "dump-*" time the sock_diag dumps alone,
// "proc-net-tcp" the text table redline no longer reads.
func BenchmarkLiveSnapshotTCP20k(b *testing.B) {
	liveFS(b)
	// inspect's FS: one that records (liveFS, --capture) keeps every fd
	// link it reads, and across iterations its growing log was timed too
	fs, err := NewFSWith(FSOptions{Root: "/"})
	if err != nil {
		b.Fatal(err)
	}
	testutil.NeedRoot(b)
	const conns, timeWait = 9500, 1000
	fdtest.RaiseNoFile(b, 2*conns+400)
	ns := benchNetns(b)
	var busy, quiet net.Listener
	var open []net.Conn
	b.Cleanup(func() {
		for _, c := range open {
			c.Close()
		}
	})
	err = netns.Do(ns, func() error {
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			return fmt.Errorf("lo up: %v: %s", err, out)
		}
		var err error
		if busy, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return err
		}
		quiet, err = net.Listen("tcp", "127.0.0.1:0")
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { busy.Close(); quiet.Close() })
	dial := func(ln net.Listener, keep bool) {
		c, err := netns.Dialer(ns)(context.Background(), "tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			b.Fatal(err)
		}
		if keep {
			open = append(open, c, s)
			return
		}
		c.Close() // the side that closes first waits in TIME_WAIT
		s.Close()
	}
	for i := 0; i < conns; i++ {
		dial(busy, true)
	}
	for i := 0; i < timeWait; i++ {
		dial(busy, false)
	}
	dial(quiet, true)
	busyPort, quietPort := busy.Addr().(*net.TCPAddr).Port, quiet.Addr().(*net.TCPAddr).Port
	inNS := func(fn func() error) {
		if err := netns.Do(ns, fn); err != nil {
			b.Fatal(err)
		}
	}
	inNS(func() error {
		data, err := dumpTCP(kernel.Live{}, allStates, nil)
		if err != nil {
			return err
		}
		socks, _ := parseSockDiag(data)
		b.Logf("%d TCP sockets in namespace %s", len(socks), ns)
		if len(socks) < 2*conns+timeWait {
			return fmt.Errorf("only %d sockets", len(socks))
		}
		return nil
	})
	// In redis-port a child process in the namespace plays the
	// redis-server: it holds the busy listener (its fd 3, opened first as
	// a server's are) and the 9,500 server ends above it, and is scanned
	// for its listeners as inspect scans Redis. (This process cannot play
	// it: whether /proc/PID/ns/net names the namespace depends on which
	// thread happens to be the thread group's leader's.) In other-port no
	// process is scanned and the port of interest is the quiet listener's.
	// The machine's other redis-servers are not part of either scene.
	srv := holder(b, ns, busy, open)
	self := Options{PIDs: []int{srv}, Ports: []int{busyPort}}
	none := Options{Comms: []string{"redline-no-such-process"}, Ports: []int{quietPort}}
	for _, tc := range []struct {
		name string
		opts Options
		port int
		want int // established sockets of the port, both ends
	}{{"redis-port", self, busyPort, 2 * conns}, {"other-port", none, quietPort, 2}} {
		b.Run("snapshot-"+tc.name, func(b *testing.B) {
			defer fdtest.ReportCPU(b)()
			for b.Loop() {
				inNS(func() error {
					s, err := Read(fs, tc.opts)
					if err != nil {
						return err
					}
					want := tc.want
					if pp := s.Process(srv); pp != nil && tc.name == "redis-port" {
						if len(pp.Listen) != 1 || !pp.NetNSIsInspector {
							return fmt.Errorf("the holder's listeners %+v (in the inspector's namespace: %v), want the busy one", pp.Listen, pp.NetNSIsInspector)
						}
					}
					if s.Net.TCP == nil || s.Net.TCP.ByState["ESTABLISHED"] != want {
						return fmt.Errorf("TCP summary %+v, want %d established", s.Net.TCP, want)
					}
					return nil
				})
			}
		})
		if tc.name == "redis-port" {
			b.Run("fds-"+tc.name, func(b *testing.B) {
				defer fdtest.ReportCPU(b)()
				var listen []tcpSocket
				inNS(func() error { listen = newReader(fs, tc.opts).selfListeners(); return nil })
				for b.Loop() {
					held, err := listenersHeld(newReader(fs, tc.opts), srv, listen)
					if err != nil || len(held) != 1 {
						b.Fatalf("listeners held %v, %v; want the busy one", held, err)
					}
				}
			})
		}
		b.Run("dump-"+tc.name, func(b *testing.B) {
			defer fdtest.ReportCPU(b)()
			for b.Loop() {
				inNS(func() error {
					data, err := dumpTCP(kernel.Live{}, allStates&^(1<<tcpListen), []int{tc.port})
					if err != nil {
						return err
					}
					_, err = parseSockDiag(data)
					return err
				})
			}
		})
	}
	// The same Redis seen from outside its namespace, as a container's
	// Redis is seen from the host: the snapshot runs in the benchmark's
	// own namespace and reads the holder's namespace's sockets.
	b.Run("snapshot-redis-other-netns", func(b *testing.B) {
		defer fdtest.ReportCPU(b)()
		for b.Loop() {
			s, err := Read(fs, Options{PIDs: []int{srv}, Ports: []int{busyPort}})
			if err != nil {
				b.Fatal(err)
			}
			pp := s.Process(srv)
			if pp == nil || pp.NetNSIsInspector || len(pp.Listen) != 1 || pp.Net == nil || pp.Net.TCP == nil {
				b.Fatalf("the holder: %+v; errors %+v", pp, s.Errors)
			}
			var from int
			for _, ps := range pp.Net.TCP.Ports {
				if ps.Port == busyPort {
					from = ps.FromEstablished
				}
			}
			if from != conns {
				b.Fatalf("TCP summary %+v, want %d established from port %d", pp.Net.TCP, conns, busyPort)
			}
		}
	})
	b.Run("dump-all", func(b *testing.B) {
		defer fdtest.ReportCPU(b)()
		for b.Loop() {
			inNS(func() error {
				data, err := dumpTCP(kernel.Live{}, allStates, nil)
				if err != nil {
					return err
				}
				_, err = parseSockDiag(data)
				return err
			})
		}
	})
	b.Run("proc-net-tcp", func(b *testing.B) {
		defer fdtest.ReportCPU(b)()
		for b.Loop() {
			inNS(func() error {
				// /proc/net follows the thread group leader's namespace:
				// the namespace's own table is under thread-self
				for _, fam := range []string{"tcp", "tcp6"} {
					data, err := readAll("/proc/thread-self/net/" + fam)
					if err != nil {
						return err
					}
					if _, err := parseTCP(data, fam); err != nil {
						return err
					}
				}
				return nil
			})
		}
	})
}

// benchNetns makes a network namespace for the benchmark (or test) and
// removes it afterwards.
func benchNetns(b testing.TB) string {
	var r [3]byte
	rand.Read(r[:])
	name := "redline-sockbench-" + hex.EncodeToString(r[:])
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		b.Skipf("ip netns add: %v: %s", err, out)
	}
	b.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	return name
}

// The kernel's filters give what filtering the whole table gives: the
// LISTEN-only dump every listener, the port bytecode exactly the sockets
// to or from those ports (several ports, IPv4 and IPv6), and the Go
// filter the same on the unfiltered dump.
func TestLiveSockDiagFilters(t *testing.T) {
	liveFS(t)
	var lns []net.Listener
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		for _, l := range lns {
			l.Close()
		}
	}()
	for _, addr := range []string{"127.0.0.1:0", "127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			if addr == "[::1]:0" {
				continue // no IPv6 loopback here
			}
			t.Fatal(err)
		}
		lns = append(lns, ln)
		for i := 0; i < 2; i++ {
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			s, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c, s)
		}
	}
	portOf := func(l net.Listener) int { return l.Addr().(*net.TCPAddr).Port }
	ports := []int{portOf(lns[0])}
	if len(lns) == 3 {
		ports = append(ports, portOf(lns[2]))
	}
	all, err := dumpTCP(kernel.Live{}, allStates, nil)
	if err != nil {
		t.Skipf("sock_diag unavailable here: %v", err)
	}
	whole, err := parseSockDiag(all)
	if err != nil {
		t.Fatal(err)
	}
	sorted := func(s []tcpSocket) []tcpSocket {
		slices.SortFunc(s, func(a, b tcpSocket) int { return int(a.inode) - int(b.inode) })
		return s
	}
	for _, tc := range []struct {
		name   string
		states uint32
		ports  []int
		listen bool
	}{
		{"listeners", 1 << tcpListen, nil, true},
		{"ports", allStates &^ (1 << tcpListen), ports, false},
	} {
		data, err := dumpTCP(kernel.Live{}, tc.states, tc.ports)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := parseSockDiag(data)
		if err != nil {
			t.Fatal(err)
		}
		// other tests' sockets come and go: compare on this test's ports
		mine := func(s []tcpSocket) []tcpSocket {
			var out []tcpSocket
			for _, x := range s {
				for _, l := range lns {
					if x.localPort == portOf(l) || x.remPort == portOf(l) {
						out = append(out, x)
						break
					}
				}
			}
			return sorted(out)
		}
		want := mine(filterSockets(nil, whole, tc.listen, tc.ports))
		if g := mine(got); !slices.Equal(g, want) {
			t.Errorf("%s:\n kernel-filtered %+v\n Go-filtered     %+v", tc.name, g, want)
		}
		if tc.name == "ports" && len(want) != 4*len(ports) {
			t.Errorf("ports %v: %d sockets, want %d (2 connections, both ends, per port)", ports, len(want), 4*len(ports))
		}
		if tc.name == "listeners" && len(want) != len(lns) {
			t.Errorf("%d listeners, want %d", len(want), len(lns))
		}
	}
}

// The port dump after the predump of Options.Ports adds the sockets of
// the other ports once: a connection between a predumped port and
// another is not counted twice.
func TestLivePortsAfterPredump(t *testing.T) {
	fs := liveFS(t)
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p1 := free.Addr().(*net.TCPAddr).Port
	free.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p2 := ln.Addr().(*net.TCPAddr).Port
	other, err := net.Dial("tcp", ln.Addr().String()) // an ephemeral port to p2
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: p1}}
	c, err := d.Dial("tcp", ln.Addr().String()) // from p1 to p2
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 2 {
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
	}
	fs.recording = false
	r := newReader(fs, Options{Ports: []int{p1}})
	r.predumpPorts()
	<-r.predump.done
	if r.predump.err != nil {
		t.Skipf("sock_diag unavailable here: %v", r.predump.err)
	}
	both := []int{p1, p2}
	slices.Sort(both)
	got, err := r.dumpPorts(both)
	if err != nil {
		t.Fatal(err)
	}
	once, err := dumpTCP(kernel.Live{}, portStates, both)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := parseSockDiag(got)
	o, _ := parseSockDiag(once)
	byInode := func(a, b tcpSocket) int { return int(a.inode) - int(b.inode) }
	slices.SortFunc(g, byInode)
	slices.SortFunc(o, byInode)
	if len(g) != 4 || !slices.Equal(g, o) {
		t.Errorf("predump + dump: %+v\none dump: %+v\nwant the 4 ends of the 2 connections once", g, o)
	}
}

var logged sync.Map

// logOnce logs msg once per benchmark.
func logOnce(b *testing.B, msg string) {
	if _, seen := logged.LoadOrStore(b.Name()+msg, true); !seen {
		b.Log(msg)
	}
}

// holder starts a process in ns that holds ln and the server ends of the
// connections in open (every second one), lowest fd first, until the
// benchmark ends; it returns the process's pid.
func holder(b *testing.B, ns string, ln net.Listener, open []net.Conn) int {
	b.Helper()
	var files []*os.File
	// Each end is moved, not copied (its copy made, then it is closed),
	// so this process never holds more than the hard RLIMIT_NOFILE.
	add := func(f interface{ File() (*os.File, error) }, move io.Closer) {
		fd, err := f.File()
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, fd)
		if move != nil {
			move.Close()
		}
	}
	add(ln.(*net.TCPListener), nil)
	for i := 1; i < len(open); i += 2 {
		add(open[i].(*net.TCPConn), open[i])
	}
	return fdtest.HoldFiles(b, ns, files).Process.Pid
}
