package labdata

import "testing"

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
