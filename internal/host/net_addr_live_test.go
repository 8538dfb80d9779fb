package host

import (
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"redline/internal/host/kernel"
	"redline/internal/netns"
	"redline/internal/testutil"
	"redline/internal/testutil/fdtest"
)

// manyLinksNetns makes a network namespace holding pairs veth pairs (2 *
// pairs interfaces, up), the first end of each with an IPv4 address, every
// third also a second IPv4 and an IPv6 address, and lo up.
func manyLinksNetns(t testing.TB, pairs int) string {
	t.Helper()
	ns := benchNetns(t)
	var batch strings.Builder
	batch.WriteString("link set lo up\n")
	for i := range pairs {
		fmt.Fprintf(&batch, "link add a%d type veth peer name b%d\n", i, i)
		fmt.Fprintf(&batch, "addr add 10.%d.%d.1/24 dev a%d\n", i/256, i%256, i)
		if i%3 == 0 {
			fmt.Fprintf(&batch, "addr add 172.16.%d.%d/16 dev a%d\n", i/256, i%256+1, i)
			fmt.Fprintf(&batch, "addr add fd00::%x/64 dev a%d nodad\n", i+1, i)
		}
		fmt.Fprintf(&batch, "link set a%d up\nlink set b%d up\n", i, i)
	}
	cmd := exec.Command("ip", "-n", ns, "-batch", "-")
	cmd.Stdin = strings.NewReader(batch.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("ip -batch: %v: %s", err, out)
	}
	return ns
}

// addrsByInterface is what net.Interfaces and Addrs give (two dumps per
// interface): the reference.
func addrsByInterface() (map[string][]string, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, ifc := range ifs {
		addrs, err := ifc.Addrs()
		if err != nil {
			return nil, err
		}
		out[ifc.Name] = []string{}
		for _, a := range addrs {
			out[ifc.Name] = append(out[ifc.Name], a.String())
		}
	}
	return out, nil
}

// One RTM_GETLINK and one RTM_GETADDR dump give every interface's
// addresses as net.Interface.Addrs does, in a namespace of 200 interfaces.
func TestLiveInterfaceAddrsDump(t *testing.T) {
	liveFS(t)
	testutil.NeedRoot(t)
	ns := manyLinksNetns(t, 100)
	var got, want map[string][]string
	err := netns.Do(ns, func() error {
		var err error
		if got, err = (kernel.Live{}).InterfaceAddrs(); err != nil {
			return err
		}
		want, err = addrsByInterface()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 201 || len(got) != len(want) {
		t.Errorf("%d interfaces dumped, net.Interfaces %d, want 201", len(got), len(want))
	}
	// the kernel adds a link's fe80:: address on its own time after the
	// link comes up (more slowly under load), so one may appear between
	// the two reads: those are left out of the comparison
	for name, w := range want {
		if g, ok := got[name]; !ok || !slices.Equal(notLinkLocal(g), notLinkLocal(w)) {
			t.Errorf("%s: dump %q, net.Interface.Addrs %q", name, g, w)
		}
	}
	for _, c := range []struct {
		name string
		want []string
	}{{"a0", []string{"10.0.0.1/24", "172.16.0.1/16", "fd00::1/64"}}, {"a99", []string{"10.0.99.1/24", "172.16.0.100/16", "fd00::64/64"}}, {"b7", nil}, {"lo", []string{"127.0.0.1/8", "::1/128"}}} {
		if g := notLinkLocal(got[c.name]); !slices.Equal(g, c.want) {
			t.Errorf("%s: %q, want %q", c.name, g, c.want)
		}
	}
}

// notLinkLocal leaves out the fe80:: addresses, which come with the link.
func notLinkLocal(addrs []string) []string {
	var out []string
	for _, a := range addrs {
		if !strings.HasPrefix(a, "fe80:") {
			out = append(out, a)
		}
	}
	return out
}

// BenchmarkLiveInterfaceAddrs200 reads the addresses of every interface of
// a namespace with 200 (plus lo): "per-interface" as net_addr.go did
// (net.InterfaceByName and Addrs for each: two dumps each), "one-dump" as
// it does now.
//
//	go test ./internal/host -run XXX -bench LiveInterfaceAddrs200
func BenchmarkLiveInterfaceAddrs200(b *testing.B) {
	liveFS(b)
	testutil.NeedRoot(b)
	ns := manyLinksNetns(b, 100)
	var names []string
	netns.Do(ns, func() error {
		ifs, err := net.Interfaces()
		for _, ifc := range ifs {
			names = append(names, ifc.Name)
		}
		return err
	})
	in := func(b *testing.B, fn func() error) {
		if err := netns.Do(ns, fn); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("per-interface", func(b *testing.B) {
		defer fdtest.ReportCPU(b)()
		for b.Loop() {
			in(b, func() error {
				for _, name := range names {
					ifc, err := net.InterfaceByName(name)
					if err != nil {
						return err
					}
					if _, err := ifc.Addrs(); err != nil {
						return err
					}
				}
				return nil
			})
		}
	})
	b.Run("one-dump", func(b *testing.B) {
		defer fdtest.ReportCPU(b)()
		for b.Loop() {
			in(b, func() error { _, err := kernel.Live{}.InterfaceAddrs(); return err })
		}
	})
}
