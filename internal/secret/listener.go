package secret

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
)

// /proc/net/tcp and /proc/net/tcp6 list this network namespace's TCP
// sockets, one a line, with the uid that owns each (its creator's):
//
//	  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
//	   0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000   102        0 41537 1 ...
//
// An address is the kernel's words in host order, in hex (little-endian
// here: 0100007F is 127.0.0.1); state 0A is LISTEN.

// listener is a listening TCP socket and its owner.
type listener struct {
	ip   net.IP
	port int
	uid  uint32
}

// procNetTCP are the files tcpListeners reads (tests point them at
// fixtures).
var procNetTCP = []string{"/proc/net/tcp", "/proc/net/tcp6"}

// maxProcNetTCP bounds what is read of one file (a host with a million
// sockets is 150 MB of text; the listeners come first in practice but
// are not promised to, so the bound only keeps memory in check).
const maxProcNetTCP = 256 << 20

// tcpListeners returns the listening TCP sockets of this namespace.
func tcpListeners() ([]listener, error) {
	var out []listener
	for _, p := range procNetTCP {
		f, err := os.Open(p)
		if os.IsNotExist(err) {
			continue // no IPv6
		}
		if err != nil {
			return nil, err
		}
		ls, err := parseProcNetTCP(io.LimitReader(f, maxProcNetTCP))
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, ls...)
	}
	return out, nil
}

// parseProcNetTCP returns the LISTEN lines of a /proc/net/tcp{,6} text.
func parseProcNetTCP(r io.Reader) ([]listener, error) {
	var out []listener
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if n == 1 || len(f) < 8 || f[3] != "0A" {
			continue
		}
		ip, port, err := parseHexAddr(f[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		uid, err := strconv.ParseUint(f[7], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("line %d: uid %q", n, f[7])
		}
		out = append(out, listener{ip: ip, port: port, uid: uint32(uid)})
	}
	return out, sc.Err()
}

// parseHexAddr parses 0100007F:18EB (IPv4) or its 32-digit IPv6 form:
// each 32-bit word in the host's order (little-endian).
func parseHexAddr(s string) (net.IP, int, error) {
	a, p, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	if !ok || err != nil || (len(a) != 8 && len(a) != 32) {
		return nil, 0, fmt.Errorf("address %q", s)
	}
	b, err := hex.DecodeString(a)
	if err != nil {
		return nil, 0, fmt.Errorf("address %q", s)
	}
	for w := 0; w < len(b); w += 4 {
		b[w], b[w+1], b[w+2], b[w+3] = b[w+3], b[w+2], b[w+1], b[w]
	}
	return net.IP(b), int(port), nil
}
