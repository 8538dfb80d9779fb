package bench

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"redline/internal/benchdata"
	"redline/internal/netns"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// stormPair makes a veth pair whose namespaces start with the given net.*
// sysctls (server and client sides), and a real redis-server in the
// server namespace; the sysctls are set through tune and rolled back
// before the namespaces go.
func stormPair(t *testing.T, server, client map[string]string, config ...string) (*netns.Pair, *redisserver.Server) {
	t.Helper()
	testutil.NeedRoot(t)
	ctx := context.Background()
	p, err := netns.NewPair(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Remove() })
	state := t.TempDir()
	for ns, sysctls := range map[string]map[string]string{p.Server: server, p.Client: client} {
		_, undo, err := tune.StartNetNS(ctx, ns, sysctls, state)
		t.Cleanup(func() {
			if err := undo(context.Background()); err != nil {
				t.Errorf("roll back the starting sysctls: %v", err)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	s := redistest.StartWith(t, redisserver.Options{NetNS: p.Server, Bind: p.ServerIP, Config: append([]string{"maxclients 10000"}, config...)})
	return p, s
}

func stormOptions(p *netns.Pair, s *redisserver.Server) Options {
	o := DefaultOptions()
	o.Addr, o.NetNS, o.ServerNetNS, o.Seed = s.Addr(), p.Client, p.Server, 1
	// 5,000 connects and their replies under the race detector on two
	// busy CPUs: a reply can wait longer than the default 10 s without
	// the server having stopped.
	o.Timeout = time.Minute
	return o
}

// TestStormOverflowsSmallSomaxconn is write-up 002: 5,000 clients against
// tcp-backlog 511 capped by somaxconn 128. The server's namespace counts
// listen overflows, the dropped connects wait for the 1 s SYN
// retransmit, and the run says so with the doctor's fix. Raised as the
// fix says (somaxconn and tcp-backlog 4096), the same load overflows
// nothing: somaxconn alone is not enough, the queue is then tcp-backlog's
// 511, which 5,000 connects overflow too on a busy machine.
func TestStormOverflowsSmallSomaxconn(t *testing.T) {
	for _, tc := range []struct {
		somaxconn, backlog string
		overflow           bool
	}{{"128", "511", true}, {"4096", "4096", false}} {
		t.Run("somaxconn="+tc.somaxconn, func(t *testing.T) {
			p, s := stormPair(t, map[string]string{"net.core.somaxconn": tc.somaxconn}, nil, "tcp-backlog "+tc.backlog)
			o := stormOptions(p, s)
			o.Clients, o.Requests, o.Threads = 5000, 20000, 2
			sum, err := runSuiteTest(t, o, "ping_inline")
			if err != nil {
				t.Fatal(err)
			}
			c := sum.Connections
			if c == nil || c.Kernel == nil || c.Kernel.Server == nil || c.Kernel.Client == nil {
				t.Fatalf("connections %+v: want the kernel's evidence from both namespaces", c)
			}
			k := c.Kernel
			t.Logf("somaxconn %s: connect p99 %.1f ms, set-up %.2f s, %d listen overflows, %d SYN cookies, problems %q",
				tc.somaxconn, c.Connect.P99, c.SetupSeconds, k.Server.ListenOverflows, k.Server.SyncookiesSent, k.Problems)
			if k.Server.Somaxconn == nil || strconv.FormatInt(*k.Server.Somaxconn, 10) != tc.somaxconn {
				t.Errorf("somaxconn read in the server's namespace = %v, want %s", k.Server.Somaxconn, tc.somaxconn)
			}
			if got := k.Overflowed(); got != tc.overflow {
				t.Fatalf("overflowed = %v (%d overflows, %d drops), want %v", got, k.Server.ListenOverflows, k.Server.ListenDrops, tc.overflow)
			}
			if !tc.overflow {
				if len(k.Problems) != 0 {
					t.Errorf("problems %q, want none", k.Problems)
				}
				return
			}
			if len(k.Problems) == 0 || !strings.Contains(k.Problems[0], "somaxconn 128") || !strings.Contains(k.Problems[0], "doctor rule somaxconn") {
				t.Errorf("problems %q: want the overflow named with somaxconn 128 and the doctor's rule", k.Problems)
			}
			// A dropped SYN is sent again after the kernel's initial
			// retransmission timeout, 1 s (TCP_TIMEOUT_INIT): the slowest
			// connects wait at least that.
			if c.Connect.Max < 1000 {
				t.Errorf("connect max %.1f ms: want the 1 s SYN retransmit of a dropped connect", c.Connect.Max)
			}
			var b strings.Builder
			WriteNotes(&b, sum, false)
			if !strings.Contains(b.String(), "listen queue overflowed") {
				t.Errorf("-q's notes (stderr) do not name the overflow:\n%s", b.String())
			}
		})
	}
}

// TestChurnRunsOutOfPorts: with the client's ports narrowed to 100 and
// TIME_WAIT reuse off, -k 0 fails its connect with EADDRNOTAVAIL once
// they are all in TIME_WAIT: the run ends at once with the failure named
// and counted, and --connect-rate counts every failure and finishes its
// schedule; neither hangs.
func TestChurnRunsOutOfPorts(t *testing.T) {
	narrow := map[string]string{"net.ipv4.ip_local_port_range": "20000 20099", "net.ipv4.tcp_tw_reuse": "0"}
	p, s := stormPair(t, nil, narrow)

	t.Run("k0", func(t *testing.T) {
		o := stormOptions(p, s)
		o.KeepAlive, o.Clients, o.Requests = false, 4, 1000
		sum, err := runSuiteTest(t, o, "ping_inline")
		if err == nil || !strings.Contains(err.Error(), "EADDRNOTAVAIL") || !strings.Contains(err.Error(), "ip_local_port_range") {
			t.Fatalf("err = %v, want the EADDRNOTAVAIL named with its fix", err)
		}
		checkPortsRanOut(t, sum)
	})
	t.Run("connect-rate", func(t *testing.T) {
		o := stormOptions(p, s)
		o.ConnectRate, o.Clients, o.Requests = 2000, 20, 400
		sum, err := runSuiteTest(t, o, "ping_inline")
		if err != nil {
			t.Fatal(err)
		}
		checkPortsRanOut(t, sum)
		if c := sum.Connections; c.Opened+c.Failures["EADDRNOTAVAIL"] != 400 {
			t.Errorf("%d opened + %d EADDRNOTAVAIL, want the 400 scheduled", c.Opened, c.Failures["EADDRNOTAVAIL"])
		}
	})
}

func checkPortsRanOut(t *testing.T, sum *benchdata.Summary) {
	t.Helper()
	if sum == nil || sum.Connections == nil {
		t.Fatal("no summary")
	}
	c := sum.Connections
	if c.Failures["EADDRNOTAVAIL"] == 0 {
		t.Fatalf("failures %v, want EADDRNOTAVAIL counted", c.Failures)
	}
	k := c.Kernel
	if k == nil || k.Client == nil || k.Client.PortRange != [2]int{20000, 20099} || k.Client.TimeWait < 90 {
		t.Fatalf("kernel evidence %+v: want the narrow range and its ports in TIME_WAIT", k)
	}
	if len(k.Problems) == 0 || !strings.Contains(strings.Join(k.Problems, "\n"), "out of local ports") {
		t.Errorf("problems %q, want the exhaustion named", k.Problems)
	}
}
