package netns

import (
	"context"
	"net"
	"os"
	"redline/internal/testutil"
	"testing"
	"time"
)

func TestPairConnectsClientToServer(t *testing.T) {
	testutil.NeedRoot(t)
	p, err := NewPair(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Remove() })
	var l net.Listener
	if err := Do(p.Server, func() error {
		var err error
		l, err = net.Listen("tcp", p.ServerIP+":0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := Dialer(p.Client)(ctx, "tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 2)
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Read(b); err != nil || string(b) != "hi" {
		t.Fatalf("read %q, %v", b, err)
	}
	c.Close()
	// The root namespace cannot reach the server: the load really crosses
	// the veth link.
	if _, err := (&net.Dialer{Timeout: 300 * time.Millisecond}).Dial("tcp", l.Addr().String()); err == nil {
		t.Error("server reachable from the root namespace")
	}
	if err := p.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{p.Server, p.Client} {
		if _, err := os.Stat(Path(ns)); !os.IsNotExist(err) {
			t.Errorf("namespace %s left behind", ns)
		}
	}
}
