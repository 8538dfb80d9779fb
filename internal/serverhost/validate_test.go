package serverhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
