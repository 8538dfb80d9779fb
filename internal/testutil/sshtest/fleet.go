package sshtest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"redline/internal/netns"
)

// NewFleet starts n hosts, each a network namespace running sshd with
// its own host key and authorizing its own "user" key, all reached from
// one controller namespace (Pair.Client, the same for every host): a
// fleet for tests of the Ansible collection. Everything is removed when
// the test ends. It skips without root or OpenSSH.
func NewFleet(t testing.TB, n int) []*Hosts {
	t.Helper()
	needSSH(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pairs, err := netns.NewStar(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range pairs {
			p.Remove()
		}
	})
	var hosts []*Hosts
	for i, p := range pairs {
		dir, err := os.MkdirTemp("", "rl-fleet-"+strconv.Itoa(i+1)+"-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		hosts = append(hosts, serve(t, p, dir, Options{}, "host", "user"))
	}
	return hosts
}

// KnownHostsLine is the known_hosts line of h's sshd.
func (h *Hosts) KnownHostsLine(t testing.TB) string {
	t.Helper()
	pub, err := os.ReadFile(h.Keys["host"] + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return "[" + h.Pair.ServerIP + "]:" + strconv.Itoa(Port) + " " + string(pub)
}

// UserKey is the path of the private key h authorizes.
func (h *Hosts) UserKey() string { return filepath.Clean(h.Keys["user"]) }
