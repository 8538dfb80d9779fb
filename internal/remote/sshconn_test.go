package remote

import "testing"

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
