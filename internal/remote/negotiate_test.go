package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNegotiate: the newest version in both ranges, or a refusal naming
// both; a version 1 client's hello (no min_protocol) means exactly 1.
func TestNegotiate(t *testing.T) {
	for _, tc := range []struct{ lo, hi, want int }{
		{0, 1, 1}, {1, 2, 2}, {1, 9, ProtocolVersion}, {2, 2, 2}, {0, 2, 2},
		{0, 99, 0}, {ProtocolVersion + 1, 9, 0}, {0, 0, 0}, {2, 1, 0},
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

// TestValidateBinary: a root session runs another redis-server only from
// a file and directory that root owns and nobody else can write.
func TestValidateBinary(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the root-only rule applies to root sessions")
	}
	ok, open := t.TempDir(), t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{ok, open} {
		if err := os.WriteFile(filepath.Join(d, "redis-server-7.2"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := validateBinary(filepath.Join(ok, "redis-server-7.2")); err != nil {
		t.Errorf("root's own binary: %v", err)
	}
	if err := validateBinary(filepath.Join(open, "redis-server-7.2")); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("a binary in a world-writable directory: %v", err)
	}
}
