package redisadmin

import "testing"

func TestNodeGetsPassword(t *testing.T) {
	cases := []struct {
		seed, node string
		any, ok    bool
	}{
		{"127.0.0.1:7000", "127.0.0.1:7001", false, true},
		{"127.0.0.1:7000", "127.0.0.2:7001", false, true}, // both loopback
		{"10.0.0.5:6379", "10.0.0.9:6379", false, true},   // the seed's /24
		{"10.0.0.5:6379", "10.0.1.9:6379", false, false},
		{"127.0.0.1:7000", "203.0.113.7:6379", false, false},
		{"127.0.0.1:7000", "203.0.113.7:6379", true, true},
		{"[fd00::1]:6379", "[fd00::2]:6379", false, true},
		{"[fd00::1]:6379", "[fd01::2]:6379", false, false},
		{"redis-a:6379", "redis-a:6380", false, true},
		{"redis-a:6379", "evil.example:6379", false, false},
		{"10.0.0.5:6379", "[::ffff:10.0.0.6]:6379", false, true},
	}
	for _, c := range cases {
		if err := NodeGetsPassword(c.seed, c.node, c.any); (err == nil) != c.ok {
			t.Errorf("seed %s, node %s, any %v: %v; want ok %v", c.seed, c.node, c.any, err, c.ok)
		}
	}
}
