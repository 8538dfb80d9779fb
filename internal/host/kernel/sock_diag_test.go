package kernel

import (
	"encoding/binary"
	"encoding/hex"
	"net"
	"slices"
	"syscall"
	"testing"

	"redline/internal/testutil/fdtest"
)

// The TCP states of the tests' dumps (include/net/tcp_states.h).
const (
	allStates = 0xffffffff
	tcpListen = 10
)

// socketKey is what host reads of a record (family, state, ports, local
// address, inode), hex; the rest (timers, queues) changes between dumps.
func socketKey(rec []byte) string {
	return hex.EncodeToString(slices.Concat(rec[0:2], rec[4:24], rec[68:72]))
}

// inode is a socketKey's socket inode.
func inode(key string) uint32 {
	b, _ := hex.DecodeString(key[len(key)-8:])
	return binary.LittleEndian.Uint32(b)
}

// One inet_diag_req dump (both families in one walk) gives what a v2
// dump per family gives: every state, listeners only, and by port.
func TestLiveSockDiagOneWalkMatchesPerFamily(t *testing.T) {
	var ports []int
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s: %v", addr, err)
			continue
		}
		defer ln.Close()
		fdtest.Connect(t, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, syscall.NETLINK_INET_DIAG)
	if err != nil {
		t.Skipf("sock_diag unavailable here: %v", err)
	}
	defer syscall.Close(fd)
	buf := make([]byte, 1<<16)
	mine := func(data []byte) []string { // this test's sockets, by inode
		data = FilterRecords(data, func(sport, dport int) bool {
			return slices.Contains(ports, sport) || slices.Contains(ports, dport)
		})
		var out []string
		for off := 0; off < len(data); off += RecordLen {
			out = append(out, socketKey(data[off:off+RecordLen]))
		}
		slices.SortFunc(out, func(a, b string) int { return int(inode(a)) - int(inode(b)) })
		return out
	}
	for _, tc := range []struct {
		name   string
		states uint32
		bc     []byte
		want   int
	}{
		{"all", allStates, nil, 3 * len(ports)},
		{"listeners", 1 << tcpListen, nil, len(ports)},
		{"ports", allStates &^ (1 << tcpListen), portsBytecode(ports), 2 * len(ports)},
	} {
		both, err := sockDiagDumpBoth(fd, tc.states, tc.bc, buf, nil)
		if err != nil {
			t.Fatalf("%s: the one-walk dump: %v", tc.name, err)
		}
		var each []byte
		for _, fam := range []uint8{syscall.AF_INET, syscall.AF_INET6} {
			if each, err = sockDiagDumpFiltered(fd, fam, tc.states, tc.bc, buf, each); err != nil {
				t.Fatal(err)
			}
		}
		if b, e := mine(both), mine(each); len(b) != tc.want || !slices.Equal(b, e) {
			t.Errorf("%s: one walk %+v\n per family %+v (want %d sockets)", tc.name, b, e, tc.want)
		}
	}
}

func TestPortsBytecode(t *testing.T) {
	// sport==6379 || dport==6379: S_EQ{yes 8,no 12} 0,0,6379  JMP{4, 12}  D_EQ{8, 12} 0,0,6379
	bc := portsBytecode([]int{6379})
	if len(bc) != 20 || bc[0] != inetDiagBcSEq || bc[8] != inetDiagBcJmp || bc[12] != inetDiagBcDEq {
		t.Fatalf("bytecode % x", bc)
	}
	ne := binary.NativeEndian
	if ne.Uint16(bc[6:]) != 6379 || ne.Uint16(bc[10:]) != 12 || ne.Uint16(bc[18:]) != 6379 {
		t.Errorf("bytecode % x", bc)
	}
	if portsBytecode(nil) != nil {
		t.Error("no ports: want no bytecode")
	}
}
