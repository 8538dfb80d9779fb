package host

import (
	"net"
	"testing"
)

// TCPPortUse counts a connection's local port when the range holds it,
// and not when it does not; the listener is never counted.
func TestTCPPortUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	port := c.LocalAddr().(*net.TCPAddr).Port
	lport := ln.Addr().(*net.TCPAddr).Port
	in, _, err := TCPPortUse(port, port)
	if err != nil {
		t.Skipf("sock_diag: %v", err)
	}
	if in < 1 {
		t.Errorf("port %d in use: counted %d, want at least 1", port, in)
	}
	if lin, _, _ := TCPPortUse(lport, lport); lin > 1 { // the accepted end may share the port; the listener never counts
		t.Errorf("listening port %d counted %d times", lport, lin)
	}
}
