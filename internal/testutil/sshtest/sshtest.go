// Package sshtest plays two hosts for tests of redline over ssh: a network
// namespace runs a real OpenSSH server (the "server host"), with keys the
// test generates, and the client side runs ssh from the other namespace
// of a veth pair. Tests that use it need root and openssh-server.
package sshtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"redline/internal/netns"
	"redline/internal/testutil"
)

// Port is sshd's port: the namespace is new, nothing else listens in it.
const Port = 2222

// Hosts is a server namespace running sshd and the client's ssh setup.
type Hosts struct {
	Pair *netns.Pair
	Dir  string
	// Keys maps a key name to its private key path: "host" is sshd's,
	// "user" is authorized, "otherhost" and "stranger" are not.
	Keys map[string]string
}

// Options adjust the server.
type Options struct {
	// SetEnv are NAME=VALUE pairs sshd sets in every session (sshd_config
	// SetEnv), such as a HOME of the test's own.
	SetEnv []string
}

// New starts sshd in a new namespace pair; everything is removed when the
// test ends. It skips without root or OpenSSH.
func New(t testing.TB, o Options) *Hosts {
	t.Helper()
	needSSH(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pair, err := netns.NewPair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pair.Remove() })
	dir, err := os.MkdirTemp("", "rl-ssh-") // short: ControlPath sockets live below it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return serve(t, pair, dir, o, "host", "otherhost", "user", "stranger")
}

// serve makes the keys named in dir (the "user" key authorized) and
// starts sshd in pair's server namespace.
func serve(t testing.TB, pair *netns.Pair, dir string, o Options, keys ...string) *Hosts {
	t.Helper()
	h := &Hosts{Pair: pair, Dir: dir, Keys: map[string]string{}}
	for _, k := range keys {
		h.Keys[k] = filepath.Join(dir, k+"_key")
		keygen(t, h.Keys[k])
	}
	copyFile(t, h.Keys["user"]+".pub", filepath.Join(dir, "authorized_keys"))
	h.startSSHD(t, o)
	return h
}

// needSSH skips t without root or OpenSSH.
func needSSH(t testing.TB) {
	t.Helper()
	testutil.NeedRoot(t)
	testutil.Need(t, "/usr/sbin/sshd", "ssh", "ssh-keygen")
}

func keygen(t testing.TB, path string) {
	t.Helper()
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "redline-test", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v: %s", err, out)
	}
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func (h *Hosts) startSSHD(t testing.TB, o Options) {
	t.Helper()
	cfg := filepath.Join(h.Dir, "sshd_config")
	conf := fmt.Sprintf(`Port %d
ListenAddress %s
HostKey %s
PidFile %s
AuthorizedKeysFile %s
StrictModes no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
LogLevel ERROR
`, Port, h.Pair.ServerIP, h.Keys["host"], filepath.Join(h.Dir, "sshd.pid"), filepath.Join(h.Dir, "authorized_keys"))
	if len(o.SetEnv) > 0 {
		conf += "SetEnv " + strings.Join(o.SetEnv, " ") + "\n"
	}
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil { // sshd's privilege separation directory
		t.Fatal(err)
	}
	cmd := exec.Command("ip", "netns", "exec", h.Pair.Server, "/usr/sbin/sshd", "-D", "-e", "-f", cfg)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stderr = Writer{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	dial := netns.Dialer(h.Pair.Client)
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := dial(ctx, "tcp", net.JoinHostPort(h.Pair.ServerIP, strconv.Itoa(Port)))
		cancel()
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd in %s does not listen: %v", h.Pair.Server, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Writer logs what is written to it through t.
type Writer struct{ T testing.TB }

func (w Writer) Write(p []byte) (int, error) {
	w.T.Logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Config writes an ssh_config for the Host "srv" (root at the server
// namespace) and returns its path: identity is a key name, hostKey the
// key name known_hosts trusts for the server.
func (h *Hosts) Config(t testing.TB, identity, hostKey string) string {
	t.Helper()
	pub, err := os.ReadFile(h.Keys[hostKey] + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	known := filepath.Join(h.Dir, "known_hosts-"+hostKey)
	line := fmt.Sprintf("[%s]:%d %s", h.Pair.ServerIP, Port, pub)
	if err := os.WriteFile(known, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(h.Dir, "ssh_config-"+identity+"-"+hostKey)
	conf := fmt.Sprintf(`Host srv
  HostName %s
  Port %d
  User root
  IdentityFile %s
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile %s
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  ConnectTimeout 20
`, h.Pair.ServerIP, Port, h.Keys[identity], known)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// ReadServerFile reads a file as the server namespace sees it (its own
// net.* sysctls).
func (h *Hosts) ReadServerFile(t testing.TB, name string) string {
	t.Helper()
	var b []byte
	err := netns.Do(h.Pair.Server, func() (err error) {
		b, err = os.ReadFile(name)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
