package doctor

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"redline/internal/change"
	"redline/internal/host"
	"redline/internal/redisadmin"
	"redline/internal/testutil/respscript"
	"redline/internal/textsafe"
)

// In a cluster, process rules judge the nodes on this host and say "node
// on another host" for the others; host rules run once, cluster rules
// once, server rules once per node read; an unread node gets no findings
// but is listed with its error.
func TestRunClusterWhereRulesRun(t *testing.T) {
	pass := func(*Facts) Result { return Pass("fine").With(Ev("x", 1)) }
	withRules(t,
		Rule{ID: "host-a", Section: "tcp", Severity: Low, Title: "t", Why: "w", Source: "s", Needs: NeedHost, Check: pass},
		Rule{ID: "proc-a", Section: "numa-cpu", Severity: Low, Title: "t", Why: "w", Source: "s", Needs: NeedHost | NeedRedisProcess, Check: pass},
		Rule{ID: "per-a", Section: "numa-cpu", Severity: Low, Title: "t", Why: "w", Source: "s", Needs: NeedHost | PerServer, Check: pass},
		Rule{ID: "redis-a", Section: "redis", Severity: Low, Title: "t", Why: "w", Source: "s", Needs: NeedRedis, Check: pass},
		Rule{ID: "cluster-a", Section: "cluster", Severity: Low, Title: "t", Why: "w", Source: "s", Needs: NeedCluster, Check: pass},
	)
	node := func(addr string, local bool, pid int, reason string) *ClusterNodeFacts {
		return &ClusterNodeFacts{Node: Node{Addr: addr, Role: "primary", Shard: 1, Local: local, Pid: pid},
			Redis: &redisadmin.Facts{Addr: addr, Info: redisadmin.ParseInfo("redis_version:7.2.4\r\n"), Process: redisadmin.Process{Pid: pid, Local: local, Reason: reason}}}
	}
	down := &ClusterNodeFacts{Node: Node{Addr: "10.0.0.9:7002", Role: "replica", Shard: 1, Error: "connect: connection refused"}}
	f := &Facts{Host: &host.Snapshot{Processes: []host.Process{{PID: 100}}}, Cluster: &Cluster{Seed: "10.0.0.1:7000", Nodes: []*ClusterNodeFacts{
		node("10.0.0.1:7000", true, 100, ""), node("10.0.0.2:7001", false, 200, "no process 200 readable on this host"), down,
	}}}
	rep, err := Run(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Finding{}
	for _, fd := range rep.Findings {
		got[fd.ID+"@"+fd.Node] = fd
	}
	for key, want := range map[string]Status{
		"host-a@": OK, "cluster-a@": OK,
		"proc-a@10.0.0.1:7000": OK, "proc-a@10.0.0.2:7001": NotChecked,
		"per-a@10.0.0.1:7000": OK, "per-a@10.0.0.2:7001": NotChecked,
		"redis-a@10.0.0.1:7000": OK, "redis-a@10.0.0.2:7001": OK,
	} {
		if fd, ok := got[key]; !ok || fd.Status != want {
			t.Errorf("%s: %+v, want %s", key, fd, want)
		} else if want == NotChecked && !strings.HasPrefix(fd.Reason, "node on another host: no process 200") {
			t.Errorf("%s: reason %q", key, fd.Reason)
		}
	}
	if len(rep.Findings) != 8 || len(rep.Nodes) != 3 || rep.Nodes[2].Error == "" || !rep.HasErrors() {
		t.Errorf("%d findings, nodes %+v, errors %v", len(rep.Findings), rep.Nodes, rep.HasErrors())
	}
}

// In a cluster each node's Redis settings go to that node; a host change
// found on several nodes is taken once.
func TestPlanOfClusterReport(t *testing.T) {
	rep := &Report{Target: Target{Redis: "10.0.0.1:7000", Cluster: true},
		Nodes: []Node{{Addr: "10.0.0.1:7000", Seed: true}, {Addr: "10.0.0.2:7001"}}}
	for _, n := range rep.Nodes {
		fix := new(Fix).Set(change.KindRedisConfig, "hz", "100", "10", "w")
		fix.Sysctl("net.core.somaxconn", "4096", "128", "w")
		rep.Findings = append(rep.Findings, Finding{ID: "r", Severity: Medium, Status: Fired, Node: n.Addr, Fix: fix})
	}
	p := rep.Plan(ReviewedPlan(Low))
	var got []string
	for _, c := range p.Changes {
		got = append(got, c.Key())
	}
	want := []string{"redis-config hz on 10.0.0.1:7000", "sysctl net.core.somaxconn", "redis-config hz on 10.0.0.2:7001"}
	if !slices.Equal(got, want) || p.Redis != "10.0.0.1:7000" {
		t.Fatalf("changes %q, redis %q; want %q", got, p.Redis, want)
	}
	if notes := strings.Join(p.Notes, "\n"); strings.Contains(notes, "left out") || strings.Contains(notes, "dropped: a more severe finding already sets redis-config") {
		t.Errorf("notes %q", p.Notes)
	}
	if cmd := Command(p.Changes[2], p.Redis); !strings.Contains(cmd, "-p 7001") {
		t.Errorf("command for node 10.0.0.2:7001: %s", cmd)
	}
}

// A node can announce any address (CONFIG SET cluster-announce-ip spreads
// it by gossip) and a server's error or a value can hold anything: the
// text and Markdown reports print them escaped, never as raw control
// characters.
func TestRenderEscapesOutsideValues(t *testing.T) {
	evil := "\x1b[31mX\x1b[0m\r\u202e\u0085\x85\xff"
	addr := evil + ":7000"
	rep := &Report{Target: Target{Redis: addr, Cluster: true, Live: true},
		Nodes: []Node{{Addr: addr, Role: "primary", Shard: 1, Seed: true}, {Addr: "10.0.0.2:7001", Role: "replica", Shard: 1, Error: "ERR " + evil}},
		Findings: []Finding{{ID: "r", Section: "redis", Severity: High, Status: Fired, Node: addr, Title: "t", Message: "node " + addr + " says " + evil,
			Evidence: []Evidence{{Source: "CONFIG x on " + addr, Value: evil}}}}}
	for name, write := range map[string]func(*strings.Builder) error{
		"text":     func(b *strings.Builder) error { return WriteText(b, rep, RenderOptions{Verbose: true}) },
		"markdown": func(b *strings.Builder) error { return WriteMarkdown(b, rep, RenderOptions{Verbose: true}) },
	} {
		var b strings.Builder
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for i, r := range out {
			if r != '\n' && (r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x202e || r == utf8.RuneError) {
				t.Fatalf("%s: raw %U at byte %d: %q", name, r, i, out)
			}
		}
		if !strings.Contains(out, `\x1b[31mX\x1b[0m\r\u202e\u0085\x85\xff:7000`) {
			t.Errorf("%s: the address is not shown escaped:\n%s", name, out)
		}
	}
	if got := textsafe.Printable("a\tb\nc"); got != "a\tb\nc" {
		t.Errorf("printable keeps tabs and newlines: %q", got)
	}
}

// Nodes are read in parallel: three nodes that each hold their first INFO
// until released are all asked before any answers (one after another,
// the second would be dialled only after the first answered). Each read
// lands on its own node, in topology order.
func TestReadNodesInParallel(t *testing.T) {
	var nodes []*ClusterNodeFacts
	var servers []*respscript.Server
	for range 3 {
		s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("INFO", 1, respscript.Stall())})
		servers = append(servers, s)
		nodes = append(nodes, &ClusterNodeFacts{Node: Node{Addr: s.Addr(), Role: "primary"}})
	}
	done := make(chan struct{})
	go func() {
		readNodes(context.Background(), nodes, GatherOptions{Redis: &redisadmin.Options{Timeout: time.Minute}}, "")
		close(done)
	}()
	for i, s := range servers {
		select {
		case <-s.Seen("INFO", 1):
		case <-time.After(30 * time.Second): // a bound on the wait, not a timing assertion
			t.Fatalf("node %d never asked while the others were held: nodes are read one after another", i)
		}
	}
	for _, s := range servers {
		s.Release()
	}
	<-done
	for i, n := range nodes {
		if n.Addr != servers[i].Addr() || n.Redis == nil && n.Error == "" {
			t.Errorf("node %d: %+v, want %s read or with its error", i, n.Node, servers[i].Addr())
		}
	}
}

// An empty value (save "") is shown as empty, an absent one as absent.
func TestEvidenceEmptyIsNotAbsent(t *testing.T) {
	f := &Facts{Redis: &redisadmin.Facts{Config: redisadmin.Config{"save": ""}}}
	_, empty, _ := f.Config("save")
	_, absent, _ := f.Config("no-such-parameter")
	if got := empty.text(); got != `CONFIG GET save = ""` {
		t.Errorf("empty: %q", got)
	}
	if got := absent.text(); got != "CONFIG GET no-such-parameter (absent)" {
		t.Errorf("absent: %q", got)
	}
}

// With --rule a cluster report may hold one node's findings only: the
// groups with nothing to show get no header; an unread node keeps its own,
// which says why.
func TestRenderLeavesOutEmptyGroups(t *testing.T) {
	rep := &Report{Target: Target{Redis: "10.0.0.1:7000", Cluster: true},
		Nodes: []Node{{Addr: "10.0.0.1:7000", Role: "primary", Shard: 1, Seed: true}, {Addr: "10.0.0.2:7001", Role: "primary", Shard: 2},
			{Addr: "10.0.0.3:7002", Role: "primary", Shard: 3, Error: "connection refused"}},
		Findings: []Finding{{ID: "r", Section: "redis", Severity: High, Status: Fired, Node: "10.0.0.1:7000", Title: "t", Message: "m"}}}
	var text, md strings.Builder
	if err := WriteText(&text, rep, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, rep, RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		for _, absent := range []string{"=== host ===", "=== cluster ===", "=== node 10.0.0.2:7001", "## Host", "## Cluster\n", "## Node 10.0.0.2:7001"} {
			if strings.Contains(out, absent) {
				t.Errorf("%s: an empty group's header %q is printed:\n%s", name, absent, out)
			}
		}
		for _, present := range []string{"node 10.0.0.1:7000 (primary, shard 1)", "10.0.0.3:7002 (primary, shard 3): NOT READ: connection refused"} {
			if !strings.Contains(strings.ToLower(out), strings.ToLower(present)) {
				t.Errorf("%s: %q missing:\n%s", name, present, out)
			}
		}
	}
}

// A CombinesNodes rule reads each local node through Facts.Servers,
// copies of its Facts: a value that does not parse on any node makes the
// rule an error, as it would on the node the rule is judged through.
func TestCombinedNodesParseError(t *testing.T) {
	check := func(f *Facts) Result {
		var ev []Evidence
		for _, g := range f.Servers() {
			n, e, ok := g.ConfigInt("maxclients")
			if !ok {
				return Fire("maxclients unreadable").With(e)
			}
			ev = append(ev, Ev(e.Source, n))
		}
		return Pass("fine").With(ev...)
	}
	withRules(t, Rule{ID: "combine-a", Section: "client", Severity: Low, Title: "t", Why: "w", Source: "s",
		Needs: NeedHost | ReadsRedis | CombinesNodes, Check: check})
	node := func(addr string, pid int, maxclients string) *ClusterNodeFacts {
		return &ClusterNodeFacts{Node: Node{Addr: addr, Role: "primary", Shard: 1, Local: true, Pid: pid},
			Redis: &redisadmin.Facts{Addr: addr, Info: redisadmin.ParseInfo("redis_version:7.2.4\r\n"),
				Config: redisadmin.Config{"maxclients": maxclients}, Process: redisadmin.Process{Pid: pid, Local: true}}}
	}
	f := &Facts{Host: &host.Snapshot{Processes: []host.Process{{PID: 100, NetNSIsInspector: true}, {PID: 101, NetNSIsInspector: true}}},
		Cluster: &Cluster{Seed: "127.0.0.1:7000", Nodes: []*ClusterNodeFacts{
			node("127.0.0.1:7000", 100, "10000"), node("127.0.0.1:7001", 101, "10000x"),
		}}}
	rep, err := Run(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("findings %+v, want one over both nodes", rep.Findings)
	}
	fd := rep.Findings[0]
	if fd.Status != Errored || !strings.Contains(fd.Reason, `CONFIG GET maxclients`) || !strings.Contains(fd.Reason, `"10000x"`) || !rep.HasErrors() {
		t.Errorf("%s: %s%s; want an error naming CONFIG GET maxclients \"10000x\"", fd.Status, fd.Message, fd.Reason)
	}
}

// A CombinesNodes rule judges the local nodes of each network namespace
// together, grouped as byNetNS groups a host's servers; a node whose
// namespace the snapshot does not know is judged with the first known
// (a group of its own would set a second, conflicting list); remote nodes
// are left out.
func TestCombinedNodesByNetNS(t *testing.T) {
	check := func(f *Facts) Result {
		var addrs []string
		for _, g := range f.Servers() {
			addrs = append(addrs, g.RedisAddr())
		}
		return Pass("%s", strings.Join(addrs, "+")).With(Ev("x", 1))
	}
	withRules(t, Rule{ID: "combine-a", Section: "client", Severity: Low, Title: "t", Why: "w", Source: "s",
		Needs: NeedHost | ReadsRedis | CombinesNodes, Check: check})
	node := func(addr string, pid int, local bool) *ClusterNodeFacts {
		return &ClusterNodeFacts{Node: Node{Addr: addr, Role: "primary", Shard: 1, Local: local, Pid: pid},
			Redis: &redisadmin.Facts{Addr: addr, Info: redisadmin.ParseInfo("redis_version:7.2.4\r\n"), Process: redisadmin.Process{Pid: pid, Local: local}}}
	}
	f := &Facts{Host: &host.Snapshot{Processes: []host.Process{{PID: 100, NetNS: 7}, {PID: 101, NetNS: 8}, {PID: 102, NetNS: 7}, {PID: 103}}},
		Cluster: &Cluster{Seed: "10.0.0.1:7000", Nodes: []*ClusterNodeFacts{
			node("10.0.0.1:7000", 100, true), node("10.0.0.1:7001", 101, true), node("10.0.0.1:7002", 102, true),
			node("10.0.0.1:7003", 103, true), node("10.0.0.2:7004", 200, false),
		}}}
	rep, err := Run(context.Background(), f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, fd := range rep.Findings {
		got = append(got, fd.Message)
	}
	want := []string{
		"nodes 10.0.0.1:7000, 10.0.0.1:7002, 10.0.0.1:7003 (one network namespace): 10.0.0.1:7000+10.0.0.1:7002+10.0.0.1:7003",
		"node 10.0.0.1:7001: 10.0.0.1:7001",
	}
	if !slices.Equal(got, want) {
		t.Errorf("messages\n%q\nwant\n%q", got, want)
	}
}
