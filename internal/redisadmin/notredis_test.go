package redisadmin_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"redline/internal/redisadmin"
	"redline/internal/redistest"
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

// A node that has met no other does not know its own address: CLUSTER
// SHARDS gives it an empty ip, and the topology names it by the host it
// was dialled at, not ":PORT".
func TestClusterShardsOfLoneNode(t *testing.T) {
	c := redistest.StartCluster(t, 1, 0)
	conn, err := redisadmin.Dial(context.Background(), redisadmin.Options{Addr: c.Seed()})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw, err := conn.Do(context.Background(), "CLUSTER", "SHARDS")
	if err != nil {
		t.Fatal(err)
	}
	if got := redisadmin.ParseClusterShards(raw); len(got) != 1 || len(got[0].Nodes) != 1 || !strings.HasPrefix(got[0].Nodes[0].Addr, ":") {
		t.Fatalf("the lone node announces an address: %+v (the case is not reproduced)", got)
	}
	shards, err := conn.ClusterShards(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) != 1 || len(shards[0].Nodes) != 1 || shards[0].Nodes[0].Addr != c.Seed() {
		t.Errorf("shards %+v, want the one node at %s", shards, c.Seed())
	}
}
