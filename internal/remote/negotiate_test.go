package remote

import "testing"

// TestNegotiate: the newest version in both ranges, or a refusal naming
// both; a version 1 client's hello (no min_protocol) means exactly 1.
func TestNegotiate(t *testing.T) {
	for _, tc := range []struct{ lo, hi, want int }{
		{0, 1, 1}, {1, 2, 2}, {1, 9, ProtocolVersion}, {2, 2, 2}, {0, 2, 2},
		{0, 99, 0}, {3, 9, 0}, {0, 0, 0}, {2, 1, 0},
	} {
		got, err := negotiate(tc.lo, tc.hi)
		if tc.want == 0 {
			if err == nil {
				t.Errorf("negotiate(%d, %d) = %d, want a refusal", tc.lo, tc.hi, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("negotiate(%d, %d) = %d, %v; want %d", tc.lo, tc.hi, got, err, tc.want)
		}
	}
}

// TestSSHServerIP: the server address of $SSH_CONNECTION, nothing else.
func TestSSHServerIP(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.1 51234 10.0.0.2 22": "10.0.0.2",
		"fe80::1 5 fe80::2 22":       "fe80::2",
		"":                           "",
		"10.0.0.1 51234 host 22":     "",
	} {
		if got := sshServerIP(in); got != want {
			t.Errorf("sshServerIP(%q) = %q, want %q", in, got, want)
		}
	}
}
