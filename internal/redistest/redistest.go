// Package redistest gives tests a real redis-server on a free loopback port,
// in a temporary directory, stopped when the test ends.
package redistest

import (
	"context"
	"fmt"
	"redline/internal/redisadmin"
	"testing"
	"time"

	"redline/internal/testutil"

	"redline/internal/redisserver"
	"redline/internal/resp"
)

// Start starts a redis-server for t and registers its shutdown. Extra
// redis.conf lines go in config.
func Start(t testing.TB, config ...string) *redisserver.Server {
	t.Helper()
	return StartWith(t, redisserver.Options{Config: config})
}

// StartWith starts a server with full options.
func StartWith(t testing.TB, o redisserver.Options) *redisserver.Server {
	t.Helper()
	testutil.Heavy(t)
	// The server makes its own directory (Stop removes it): as root it
	// runs as an unprivileged user, who cannot reach into t.TempDir.
	s, err := redisserver.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("stop redis-server: %v", err)
		}
	})
	return s
}

// Client returns a control connection to s, closed when the test ends.
func Client(t testing.TB, s *redisserver.Server) *resp.Client {
	t.Helper()
	c, err := s.Client(context.Background())
	if err != nil {
		t.Fatalf("connect to redis-server %s: %v", s.Addr(), err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Do runs one command on c and fails the test on an I/O error.
func Do(t testing.TB, c *resp.Client, args ...string) resp.Value {
	t.Helper()
	v, err := c.Do(context.Background(), args...)
	if err != nil {
		t.Fatalf("%v: %v", args[:min(len(args), 8)], err) // a MIGRATE ... KEYS line can hold thousands
	}
	return v
}

// StartCluster starts a Redis Cluster of primaries (each with replicas)
// on free loopback ports, ready (cluster_state:ok on every node), and
// stops it when the test ends.
func StartCluster(t testing.TB, primaries, replicas int, config ...string) *redisserver.Cluster {
	t.Helper()
	testutil.Heavy(t)
	c, err := redisserver.StartCluster(context.Background(), redisserver.ClusterOptions{
		Primaries: primaries, Replicas: replicas, Server: redisserver.Options{Config: config},
	})
	if err != nil {
		t.Fatalf("start redis cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stop redis cluster: %v", err)
		}
	})
	return c
}

// linkedReplicas counts the replicas of a SENTINEL REPLICAS reply that
// Sentinel saw linked to their primary: only those can be promoted.
func linkedReplicas(v resp.Value) int {
	n := 0
	for _, r := range v.Elems {
		for i := 0; i+1 < len(r.Elems); i += 2 {
			if r.Elems[i].Str == "master-link-status" && r.Elems[i+1].Str == "ok" {
				n++
			}
		}
	}
	return n
}

// StartSentinel starts a Sentinel (the server binary with --sentinel)
// that monitors primary as name, with a quorum of 1 and short timeouts,
// and waits until it knows replicas replicas of it linked to it (Sentinel
// reads a replica's INFO every 10 s: one seen before its first sync could
// not be promoted until then). It is stopped when the test ends.
func StartSentinel(t testing.TB, primary *redisserver.Server, name string, replicas int) *redisserver.Server {
	t.Helper()
	s := StartWith(t, redisserver.Options{Args: []string{"--sentinel"}, Config: []string{
		fmt.Sprintf("sentinel monitor %s %s %d 1", name, primary.Host, primary.Port),
		fmt.Sprintf("sentinel down-after-milliseconds %s 1000", name),
		fmt.Sprintf("sentinel failover-timeout %s 10000", name),
	}})
	c := Client(t, s)
	deadline := time.Now().Add(30 * time.Second)
	for {
		v := Do(t, c, "SENTINEL", "REPLICAS", name)
		if linkedReplicas(v) >= replicas {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("sentinel %s knows %d replicas of %s after 30s, want %d", s.Addr(), len(v.Elems), name, replicas)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ClusterConfig reads one setting of every node of c, in c.Nodes() order
// (with AUTH first when a password is given).
func ClusterConfig(t testing.TB, c *redisserver.Cluster, name string, password ...string) []string {
	t.Helper()
	var out []string
	for _, s := range c.Nodes() {
		cl := Client(t, s)
		for _, pw := range password {
			Do(t, cl, "AUTH", pw)
		}
		v := Do(t, cl, "CONFIG", "GET", name)
		if len(v.Elems) != 2 {
			t.Fatalf("CONFIG GET %s on %s: %+v", name, s.Addr(), v)
		}
		out = append(out, v.Elems[1].Str)
	}
	return out
}

// ConfigValue is CONFIG GET name of the server at addr.
func ConfigValue(t testing.TB, addr, name string) string {
	t.Helper()
	c, err := redisadmin.Dial(context.Background(), redisadmin.Options{Addr: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m, err := c.ConfigGet(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return m[name]
}
