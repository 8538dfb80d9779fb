package redisadmin_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"redline/internal/redisadmin"
)

// An address where a web server listens is "not a Redis server", with what
// it answered, not "protocol error: unknown type byte 'H'".
func TestNotARedisServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 512)
			c.Read(buf)
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
			c.Close()
		}
	}()
	ctx := context.Background()
	for _, pass := range []string{"", "pw"} { // the first reply is INFO's, or AUTH's
		c, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: ln.Addr().String(), Password: pass})
		if err == nil {
			_, err = c.Info(ctx, "server")
			c.Close()
		}
		want := ln.Addr().String() + ` is not a Redis server (it answered "HTTP/1.1 400 Bad Request")`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("password %q: %v\nwant %s", pass, err, want)
		}
	}
}
