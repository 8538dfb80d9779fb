package serverhost

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

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

// socketTree is a tree for the socket checks as uid 65534 would do them:
// base (0755) holding private (root's, 0700) and shared (0755), a
// listener answering its own name in each.
func socketTree(t *testing.T) (base, private, shared string) {
	t.Helper()
	testutil.NeedRoot(t)
	base = t.TempDir()
	os.Chmod(base, 0o755)
	os.Chmod(filepath.Dir(base), 0o755) // the test's own temporary root
	private, shared = filepath.Join(base, "private"), filepath.Join(base, "shared")
	os.Mkdir(private, 0o700)
	os.Mkdir(shared, 0o755)
	for _, d := range []string{private, shared} {
		sayName(t, filepath.Join(d, "redis.sock"), filepath.Base(d))
	}
	return base, private, shared
}

// sayName listens on socket p (mode 0777) and writes name to whoever
// connects.
func sayName(t *testing.T, p, name string) {
	t.Helper()
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	os.Chmod(p, 0o777)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(name))
			c.Close()
		}
	}()
}

var nobody = &invoker{uid: 65534, gids: []uint32{65534}, name: "nobody"}

// The check is the kernel's for the invoking user: search on every
// directory crossed, a link's target's included, write on the socket.
// The check the session made before (the socket's real path, after
// resolving links as root) let through a link that only root can follow.
func TestOpenSocketAs(t *testing.T) {
	base, private, shared := socketTree(t)
	os.Symlink(filepath.Join(shared, "redis.sock"), filepath.Join(private, "to-shared.sock"))
	os.Symlink(filepath.Join(private, "redis.sock"), filepath.Join(shared, "to-private.sock"))
	os.Symlink("shared/../shared", filepath.Join(base, "up"))
	os.Symlink("private/../shared", filepath.Join(base, "through-private"))
	for _, tc := range []struct {
		path, want string
	}{
		{filepath.Join(shared, "redis.sock"), ""},
		{filepath.Join(base, "up", "redis.sock"), ""},
		{shared + "/../shared/redis.sock", ""},
		{filepath.Join(base, "through-private", "redis.sock"), "cannot search directory"},
		{private + "/../shared/redis.sock", "cannot search directory"},
		{filepath.Join(private, "redis.sock"), "cannot search directory"},
		{filepath.Join(private, "to-shared.sock"), "cannot search directory"},
		{filepath.Join(shared, "to-private.sock"), "cannot search directory"},
		{filepath.Join(shared), "not a socket"},
		{filepath.Join(shared, "redis.sock", "x"), "not a directory"},
	} {
		fd, err := openSocketAs(tc.path, nobody)
		if err == nil {
			unix.Close(fd)
		}
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
	os.Chmod(filepath.Join(shared, "redis.sock"), 0o755)
	if _, err := openSocketAs(filepath.Join(shared, "redis.sock"), nobody); err == nil || !strings.Contains(err.Error(), "cannot connect") {
		t.Errorf("a socket others may not write: %v", err)
	}
	if fd, err := openSocketAs(filepath.Join(shared, "redis.sock"), &invoker{uid: 65534, gids: []uint32{0}, name: "in root's group"}); err == nil {
		unix.Close(fd)
		t.Error("group bits r-x let a member of the group write")
	}
}

// setACL gives p a POSIX access ACL (the xattr's layout): owner rwx, the
// named users' entries, group r-x, mask rwx, other as given.
func setACL(t *testing.T, p string, other uint16, users map[uint32]uint16) {
	t.Helper()
	entry := func(b []byte, tag, perm uint16, id uint32) []byte {
		b = binary.LittleEndian.AppendUint16(b, tag)
		b = binary.LittleEndian.AppendUint16(b, perm)
		return binary.LittleEndian.AppendUint32(b, id)
	}
	b := binary.LittleEndian.AppendUint32(nil, 2)
	b = entry(b, aclUserObj, 7, 0xffffffff)
	for uid, perm := range users {
		b = entry(b, aclUser, perm, uid)
	}
	b = entry(b, aclGroupObj, 5, 0xffffffff)
	b = entry(b, aclMask, 7, 0xffffffff)
	b = entry(b, aclOther, other, 0xffffffff)
	if err := unix.Setxattr(p, "system.posix_acl_access", b, 0); err != nil {
		t.Skipf("no POSIX ACLs here: %v", err)
	}
}

// An ACL decides as the kernel does: a named user's entry grants beyond
// the mode's other bits, and refuses below them.
func TestOpenSocketAsACL(t *testing.T) {
	_, private, shared := socketTree(t)
	setACL(t, private, 0, map[uint32]uint16{65534: 1}) // search for nobody alone
	sock := filepath.Join(private, "redis.sock")
	setACL(t, sock, 0, map[uint32]uint16{65534: 2})
	if fd, err := openSocketAs(sock, nobody); err != nil {
		t.Errorf("an ACL granting nobody search and write: %v", err)
	} else {
		unix.Close(fd)
	}
	setACL(t, shared, 5, map[uint32]uint16{65534: 0}) // everyone but nobody
	if _, err := openSocketAs(filepath.Join(shared, "redis.sock"), nobody); err == nil || !strings.Contains(err.Error(), "cannot search") {
		t.Errorf("an ACL refusing nobody the directory: %v", err)
	}
}

// The connection goes to the socket checked: a link swapped between the
// check and the connect (here, at the hook between them) does not move
// it to root's socket, as it did when the session checked the path and
// dialled it again later.
func TestGuardConnectsToTheSocketChecked(t *testing.T) {
	base, private, shared := socketTree(t)
	mine := filepath.Join(base, "mine") // the invoking user's own directory
	os.Mkdir(mine, 0o755)
	os.Chown(mine, 65534, 65534)
	link := filepath.Join(mine, "d")
	os.Symlink(shared, link)
	sock := filepath.Join(link, "redis.sock")
	a := &admitted{inv: nobody, keys: map[string]bool{}, started: map[string]string{}}
	if _, err := a.admit(context.Background(), RedisTarget{Network: "unix", Addr: sock}); err != nil {
		t.Fatal(err)
	}
	testHookSocketChecked = func() {
		tmp := filepath.Join(mine, "d.new")
		os.Symlink(private, tmp)
		os.Rename(tmp, link)
	}
	defer func() { testHookSocketChecked = nil }()
	c, err := a.guard(context.Background(), "unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, _ := io.ReadAll(c)
	if string(got) != "shared" {
		t.Fatalf("connected to %q, want the socket checked (shared)", got)
	}
}

// Issue 24, item 11: a session's server listens on loopback or on the
// SSH connection's address, on a port of 1024 and up.
func TestSessionServerAddress(t *testing.T) {
	t.Setenv("SSH_CONNECTION", "10.0.0.9 50000 10.0.0.5 22")
	for _, tc := range []struct {
		a    RedisStartArgs
		want string
	}{
		{RedisStartArgs{Bind: "0.0.0.0"}, "loopback or on this host's address"},
		{RedisStartArgs{Bind: "10.0.0.6"}, "loopback or on this host's address"},
		{RedisStartArgs{Bind: "127.0.0.1", Port: 22}, "1024-65535"},
		{RedisStartArgs{Bind: "10.0.0.5", Port: 6380}, ""},
		{RedisStartArgs{Bind: "::1"}, ""},
	} {
		err := validateRedisStart(&tc.a)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.a, err, tc.want)
		}
	}
}
