package serverhost

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/remote"
	"redline/internal/testutil"
)

// TestValidateBinary: a root session runs another redis-server only from
// a file and directories from / that root owns and nobody else can write
// (so not from below the world-writable /tmp).
func TestValidateBinary(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the root-only rule applies to root sessions")
	}
	mine := t.TempDir()
	if err := os.WriteFile(filepath.Join(mine, "redis-server-7.2"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if real, err := exec.LookPath("redis-server"); err == nil {
		if err := validateBinary(real); err != nil {
			t.Errorf("root's own binary: %v", err)
		}
	}
	if err := validateBinary(filepath.Join(mine, "redis-server-7.2")); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("a binary below /tmp: %v", err)
	}
}

// Issue 24, item 4: through `sudo redline session`, a user read the
// settings of a server behind a root-only (0700) unix socket. A root
// session now connects only to a socket the invoking user could.
func TestSessionSocketOnlyWhereTheInvokerCould(t *testing.T) {
	testutil.NeedRoot(t)
	listen := func(dir string, mode os.FileMode) string {
		p := filepath.Join(dir, "redis.sock")
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		os.Chmod(p, mode)
		return p
	}
	base := t.TempDir()
	os.Chmod(base, 0o755)
	os.Chmod(filepath.Dir(base), 0o755) // the test's own temporary root
	private, shared := filepath.Join(base, "private"), filepath.Join(base, "shared")
	os.Mkdir(private, 0o700)
	os.Mkdir(shared, 0o755)
	rootOnly, open := listen(private, 0o777), listen(shared, 0o777)
	t.Setenv("SUDO_UID", "65534")
	err := validateRedisTarget(&remote.RedisTarget{Network: "unix", Addr: rootOnly})
	if err == nil || !strings.Contains(err.Error(), "cannot reach it") {
		t.Errorf("a socket in root's 0700 directory: %v", err)
	}
	if err := validateRedisTarget(&remote.RedisTarget{Network: "unix", Addr: open}); err != nil {
		t.Errorf("a socket anyone may connect to: %v", err)
	}
	os.Chmod(open, 0o700)
	if err := validateRedisTarget(&remote.RedisTarget{Network: "unix", Addr: open}); err == nil || !strings.Contains(err.Error(), "cannot connect") {
		t.Errorf("a 0700 socket of root's: %v", err)
	}
}

// Issue 24, item 11: a session's server listens on loopback or on the
// SSH connection's address, on a port of 1024 and up.
func TestSessionServerAddress(t *testing.T) {
	t.Setenv("SSH_CONNECTION", "10.0.0.9 50000 10.0.0.5 22")
	for _, tc := range []struct {
		a    remote.RedisStartArgs
		want string
	}{
		{remote.RedisStartArgs{Bind: "0.0.0.0"}, "loopback or on this host's address"},
		{remote.RedisStartArgs{Bind: "10.0.0.6"}, "loopback or on this host's address"},
		{remote.RedisStartArgs{Bind: "127.0.0.1", Port: 22}, "1024-65535"},
		{remote.RedisStartArgs{Bind: "10.0.0.5", Port: 6380}, ""},
		{remote.RedisStartArgs{Bind: "::1"}, ""},
	} {
		err := validateRedisStart(&tc.a)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.a, err, tc.want)
		}
	}
}
