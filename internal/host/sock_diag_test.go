package host

import (
	"encoding/binary"
	"net"
	"slices"
	"syscall"
	"testing"
)

// diagRecord builds an inet_diag_msg record as sockdiag/tcp stores it.
func diagRecord(family, state byte, src []byte, sport, dport uint16, inode uint32) []byte {
	d := make([]byte, inetDiagMsgLen)
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
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	data, err := dumpTCPSockDiag()
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
// with at least 20,000 loopback TCP sockets: 9,500 open connections (both
// ends, 19,000 file descriptors: RLIMIT_NOFILE is raised, and hard limits
// of 20,000 are common) and 1,000 in TIME_WAIT (which hold none):
//
//	go test ./internal/host -run XXX -bench LiveSnapshotTCP -benchtime 10x
//
// "snapshot" is the whole Read, "sockdiag" and "proc-net-tcp" the two ways
// to list the sockets alone.
func BenchmarkLiveSnapshotTCP20k(b *testing.B) {
	fs := liveFS(b)
	const conns, timeWait = 9500, 1000
	raiseNoFile(b, 2*conns+400)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for i := 0; i < conns; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatalf("connection %d: %v", i, err)
		}
		s, err := ln.Accept()
		if err != nil {
			b.Fatal(err)
		}
		open = append(open, c, s)
	}
	for i := 0; i < timeWait; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			b.Fatal(err)
		}
		c.Close() // the side that closes first waits in TIME_WAIT
		s.Close()
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if data, err := dumpTCPSockDiag(); err == nil {
		socks, _ := parseSockDiag(data)
		b.Logf("%d TCP sockets in this namespace", len(socks))
		if len(socks) < 2*conns+timeWait {
			b.Fatalf("only %d sockets", len(socks))
		}
	}
	b.Run("snapshot", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			s, err := Read(fs, Options{Ports: []int{port}})
			if err != nil {
				b.Fatal(err)
			}
			if s.Net.TCP == nil || s.Net.TCP.ByState["ESTABLISHED"] < 2*conns {
				b.Fatalf("TCP summary %+v", s.Net.TCP)
			}
		}
	})
	b.Run("sockdiag", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			data, err := dumpTCPSockDiag()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := parseSockDiag(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proc-net-tcp", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			for _, fam := range []string{"tcp", "tcp6"} {
				data, err := readAll("/proc/net/" + fam)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := parseTCP(data, fam); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// reportCPU reports the process's CPU time (user + system) per operation
// as cpu-ms/op: on a shared machine wall time measures the neighbours too.
func reportCPU(b *testing.B) func() {
	start := cpuTime(b)
	return func() { b.ReportMetric(float64(cpuTime(b)-start)/1e6/float64(b.N), "cpu-ms/op") }
}

func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// raiseNoFile lifts RLIMIT_NOFILE to at least n (up to the hard limit).
func raiseNoFile(b *testing.B, n uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		b.Skipf("RLIMIT_NOFILE hard limit %d < %d", lim.Max, n)
	}
	old := lim
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}
