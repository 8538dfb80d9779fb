package secret

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/testutil"
)

// Issue 35, item 3: $REDISCLI_AUTH went to any loopback address a file
// named, and any local user can listen on one. It now goes to a file's
// address only when root or the invoking user owns the listener; an
// explicit --pass-file goes where the command talks.
func TestForFileAddress(t *testing.T) {
	env := Given{Value: "from-env"}
	mine := testutil.ListenAs(t, os.Geteuid())
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	freeAddr := free.Addr().String()
	free.Close()
	cases := map[string]string{
		mine.Addr().String(): "from-env",
		"10.9.8.7:6379":      "",
		"attacker.example:1": "",
		freeAddr:             "", // nothing listens: nobody to trust
	}
	if os.Geteuid() == 0 {
		nobodys := testutil.ListenAs(t, 65534).Addr().String()
		cases[nobodys] = ""
		if _, why := env.ForFileAddress("tcp", nobodys); !strings.Contains(why, "uid 65534") {
			t.Errorf("nobody's listener: %q does not name its owner", why)
		}
	}
	for addr, want := range cases {
		pw, why := env.ForFileAddress("tcp", addr)
		if pw != want {
			t.Errorf("$REDISCLI_AUTH to %s: %q (%s), want %q", addr, pw, why, want)
		}
		if want == "" && !strings.Contains(why, "--pass-file") {
			t.Errorf("%s: withheld without saying what to do: %q", addr, why)
		}
		if pw, _ := (Given{Value: "given", Explicit: true}).ForFileAddress("tcp", addr); pw != "given" {
			t.Errorf("--pass-file to %s: %q", addr, pw)
		}
	}
	if pw, why := (Given{}).ForFileAddress("tcp", "10.9.8.7:6379"); pw != "" || why != "" {
		t.Errorf("no password: %q %q", pw, why)
	}
}

// A unix socket a file names gets the environment's password when it is
// its owner's and the path is theirs alone.
func TestForFileAddressUnix(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o700)
	p := filepath.Join(dir, "redis.sock")
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if pw, why := (Given{Value: "e"}).ForFileAddress("unix", p); pw != "e" {
		t.Errorf("own socket: withheld: %s", why)
	}
	if os.Geteuid() == 0 {
		os.Lchown(p, 65534, 65534)
		if pw, _ := (Given{Value: "e"}).ForFileAddress("unix", p); pw != "" {
			t.Error("nobody's socket got the password")
		}
	}
}

func TestParseProcNetTCP(t *testing.T) {
	const text = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000   102        0 41537 1 0 100 0 0 10 0
   1: 0100007F:18EB 0100007F:C350 01 00000000:00000000 00:00000000 00000000  1000        0 41538 1 0 20 4 30 10 -1
   2: 00000000000000000000000001000000:1770 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5 1 0 100 0 0 10 0
`
	ls, err := parseProcNetTCP(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || !ls[0].ip.Equal(net.IPv4(127, 0, 0, 1)) || ls[0].port != 6379 || ls[0].uid != 102 ||
		!ls[1].ip.Equal(net.IPv6loopback) || ls[1].port != 6000 || ls[1].uid != 0 {
		t.Errorf("listeners %+v", ls)
	}
	if _, err := parseProcNetTCP(strings.NewReader("h\n 0: zz:1 0:0 0A a b c 0 0\n")); err == nil {
		t.Error("a bad address parsed")
	}
}
