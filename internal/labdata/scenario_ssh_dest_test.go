package labdata

import "testing"

func TestValidSSHDestination(t *testing.T) {
	for s, want := range map[string]bool{
		"load1": true, "root@load1": true, "u@10.0.0.2": true, "[::1]": true,
		"": false, "-oProxyCommand=x": false, "root@-oProxyCommand=x": false, "root@": false,
		"load1\n": false, "lo\x01ad": false, "a b": false, "a;b": false, "a\tb": false,
	} {
		if got := ValidSSHDestination(s); got != want {
			t.Errorf("ValidSSHDestination(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestLoopbackHost(t *testing.T) {
	for h, want := range map[string]bool{
		"localhost": true, "LOCALHOST.": true, "db.localhost": true,
		"127.0.0.1": true, "127.1": true, "127.0.1": true, "127": true, "::1": true, "[::1]": true,
		"0.0.0.0": true, "0": true, "::": true,
		"10.0.0.1": false, "128.1": false, "redis.example": false, "localhost.example": false,
		"fe80::1": false, "": false,
	} {
		if got := LoopbackHost(h); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", h, got, want)
		}
	}
}
