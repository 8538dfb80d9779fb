package bench

import (
	"context"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"redline/internal/benchdata"
	"redline/internal/redistest"
	"redline/internal/testutil"
)

// TestConnectRateAgainstRealServer: --connect-rate makes exactly -n
// connections, one request each, and reports them per second with the
// client's kernel evidence (the server is on loopback, so its counters
// are read too).
func TestConnectRateAgainstRealServer(t *testing.T) {
	testutil.Heavy(t)
	s := redistest.Start(t)
	o := DefaultOptions()
	o.Addr, o.Seed = s.Addr(), 1
	o.ConnectRate, o.Clients, o.Requests, o.Threads = 2000, 10, 200, 2
	sum, err := runSuiteTest(t, o, "ping_inline")
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Connections
	if sum.Requests != 200 || c.Opened != 200 || len(c.Failures) != 0 || c.PerSecond <= 0 {
		t.Fatalf("requests %d, connections %+v: want 200 connections, one request each, none failed", sum.Requests, c)
	}
	if c.Kernel == nil || c.Kernel.Client == nil || c.Kernel.Server == nil || c.Kernel.Client.ActiveOpens < 200 {
		t.Errorf("kernel evidence %+v: want both sides, at least 200 connects started", c.Kernel)
	}
	if sum.Config.ConnectRate != 2000 {
		t.Errorf("config connect rate %v, want 2000", sum.Config.ConnectRate)
	}
	// Each connection carries one request and closes: "keep alive: 0", as
	// redis-benchmark -k 0 says of its reconnecting clients.
	if sum.Config.KeepAlive {
		t.Error("a --connect-rate run says its connections were kept alive")
	}
}

// TestConnectRateRejectsRate: the two open-loop modes do not mix.
func TestConnectRateRejectsRate(t *testing.T) {
	o := DefaultOptions()
	o.ConnectRate, o.Rate = 100, 100
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--connect-rate") {
		t.Errorf("err = %v, want --rate with --connect-rate refused", err)
	}
}

// TestProblemsNameCauseAndFix: each kind of trouble gets one line with
// the doctor's rule; a clean run gets none.
func TestProblemsNameCauseAndFix(t *testing.T) {
	somax := int64(128)
	cases := []struct {
		name string
		e    benchdata.NetEvidence
		fail map[string]int64
		want []string
	}{
		{"clean", benchdata.NetEvidence{Server: &benchdata.ServerNet{PassiveOpens: 50}, Client: &benchdata.ClientNet{}}, nil, nil},
		{"overflow", benchdata.NetEvidence{Server: &benchdata.ServerNet{ListenOverflows: 9, ListenDrops: 9, Somaxconn: &somax}}, nil,
			[]string{"listen queue overflowed: 9 ListenOverflows", "somaxconn 128", "doctor rule somaxconn", "tcp-backlog-low"}},
		{"cookies", benchdata.NetEvidence{Server: &benchdata.ServerNet{SyncookiesSent: 3}}, nil, []string{"3 SYN cookies", "syn-backlog"}},
		{"ports", benchdata.NetEvidence{Client: &benchdata.ClientNet{PortRange: [2]int{10000, 10099}, EphemeralInUse: 100, TimeWait: 99}},
			map[string]int64{"EADDRNOTAVAIL": 7}, []string{"out of local ports: 7 connects failed with EADDRNOTAVAIL", "100 of the 100 ports", "10000-10099", "99 sockets in TIME_WAIT", "port-range"}},
	}
	for _, tc := range cases {
		got := strings.Join(problems(&tc.e, &benchdata.Connections{Failures: tc.fail}), "\n")
		if tc.want == nil && got != "" {
			t.Errorf("%s: problems %q, want none", tc.name, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: problems %q lack %q", tc.name, got, w)
			}
		}
	}
}

// TestServerProcCounters: a server on another machine (a lab's ssh target)
// has its listen queue's counters read through ServerProc, the server
// host's /proc as its session samples it: the deltas between the readings
// before and after the run, and that host's somaxconn, not this one's.
func TestServerProcCounters(t *testing.T) {
	testutil.Heavy(t)
	s := redistest.Start(t)
	netstat, err := os.ReadFile("/proc/net/netstat")
	if err != nil {
		t.Skip(err)
	}
	snmp, _ := os.ReadFile("/proc/net/snmp")
	// The same real files, with ListenOverflows and ListenDrops set.
	withOverflows := func(n int) []byte {
		lines := strings.Split(string(netstat), "\n")
		for i := 0; i+1 < len(lines); i += 2 {
			if !strings.HasPrefix(lines[i], "TcpExt:") {
				continue
			}
			names, vals := strings.Fields(lines[i]), strings.Fields(lines[i+1])
			for j, name := range names {
				if name == "ListenOverflows" || name == "ListenDrops" {
					vals[j] = strconv.Itoa(n)
				}
			}
			lines[i+1] = strings.Join(vals, " ")
		}
		return []byte(strings.Join(lines, "\n"))
	}
	calls := 0
	o := DefaultOptions()
	o.Addr, o.Seed, o.Clients, o.Requests = s.Addr(), 1, 4, 2000
	o.ServerProc = func(context.Context) (fs.FS, error) {
		calls++
		return fstest.MapFS{
			"net/netstat":            {Data: withOverflows(1000 + 37*(calls-1))},
			"net/snmp":               {Data: snmp},
			"sys/net/core/somaxconn": {Data: []byte("128\n")},
		}, nil
	}
	sum, err := runSuiteTest(t, o, "ping_inline")
	if err != nil {
		t.Fatal(err)
	}
	k := sum.Connections.Kernel
	if calls != 2 || k == nil || k.Server == nil || k.Server.ListenOverflows != 37 || k.Server.Somaxconn == nil || *k.Server.Somaxconn != 128 {
		t.Fatalf("%d readings, server evidence %+v: want 37 overflows and somaxconn 128 from the server host's files", calls, k)
	}
	if len(k.Problems) == 0 || !strings.Contains(strings.Join(k.Problems, " "), "somaxconn") {
		t.Errorf("problems %q: want the overflow named with the somaxconn fix", k.Problems)
	}
}
