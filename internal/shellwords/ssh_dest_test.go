package shellwords

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
