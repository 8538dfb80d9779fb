package testutil

import (
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// RunAs runs the shell script as user u (setpriv, groups cleared) and
// fails t if it fails: a test's stand-in for a process of another user,
// such as the unprivileged user a root redline runs its servers as.
func RunAs(t testing.TB, u *user.User, script string) {
	t.Helper()
	if out, err := TryAs(t, u, script); err != nil {
		t.Fatalf("as %s: %s: %v\n%s", u.Username, script, err, out)
	}
}

// TryAs runs the shell script as user u, as RunAs does, and returns its
// output and error: for what that user must not be able to do.
func TryAs(t testing.TB, u *user.User, script string) (string, error) {
	t.Helper()
	NeedTools(t, "setpriv")
	out, err := exec.Command("setpriv", "--reuid="+u.Uid, "--regid="+u.Gid, "--clear-groups", "--", "/bin/sh", "-c", script).CombinedOutput()
	return string(out), err
}

// SecretFile writes a file only root can read, holding marker, in a
// directory of its own: what a link planted by another user points at,
// which nothing redline outputs may contain.
func SecretFile(t testing.TB, marker string) string {
	t.Helper()
	dir := TrustedTempDir(t)
	p := filepath.Join(dir, "shadow")
	if err := os.WriteFile(p, []byte(marker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// ListenAs listens on 127.0.0.1 with a TCP socket owned by uid, closed
// when t ends: a stand-in for another local user's listener (root
// switches its thread's fsuid, which names a socket's owner, for the
// socket(2) call).
func ListenAs(t testing.TB, uid int) net.Listener {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if uid != os.Geteuid() {
		if os.Geteuid() != 0 {
			t.Fatalf("a listener of uid %d needs root", uid)
		}
		unix.Setfsuid(uid)
		defer unix.Setfsuid(os.Geteuid())
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}
