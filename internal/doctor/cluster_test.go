package doctor_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"redline/internal/bench"
	"redline/internal/doctor"
	_ "redline/internal/doctor/rules"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/resp"
)

// clusterReport runs doctor against the cluster through seed, with the
// cluster rules, one server rule (appendfsync-always), one host rule
// (overcommit-memory) and one host rule that reads the server (somaxconn
// against tcp-backlog) to see where each kind runs.
func clusterReport(t *testing.T, seed string) *doctor.Report {
	t.Helper()
	ctx := context.Background()
	f, err := doctor.Gather(ctx, doctor.GatherOptions{Root: "/", Redis: &redisadmin.Options{Addr: seed}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := doctor.Run(ctx, f, doctor.Options{Only: []string{"cluster-*", "appendfsync-always", "overcommit-memory", "somaxconn"}})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// finding returns the one finding of id with no node label.
func finding(t *testing.T, rep *doctor.Report, id string) doctor.Finding {
	t.Helper()
	for _, f := range rep.Findings {
		if f.ID == id && f.Node == "" {
			return f
		}
	}
	t.Fatalf("no finding %s", id)
	return doctor.Finding{}
}

// TestClusterDoctor checks a real 3-primary cluster with a replica each:
// healthy, then with a node's setting changed, keys piled on one primary,
// slots served by nobody, slots moved to one primary, and a node killed.
func TestClusterDoctor(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	seed := c.Seed()
	fill(t, c, 3000, func(i int) string { return "key:" + strconv.Itoa(i) })

	t.Run("healthy", func(t *testing.T) {
		rep := clusterReport(t, seed)
		if len(rep.Nodes) != 6 || !rep.Target.Cluster || rep.HasErrors() {
			t.Fatalf("nodes %+v, errors %v", rep.Nodes, rep.HasErrors())
		}
		for i, n := range rep.Nodes {
			wantRole, wantShard := "primary", i/2+1
			if i%2 == 1 {
				wantRole = "replica"
			}
			if n.Role != wantRole || n.Shard != wantShard || !n.Local || n.Pid == 0 || n.Error != "" {
				t.Errorf("node %d = %+v, want a local %s of shard %d", i, n, wantRole, wantShard)
			}
		}
		for _, id := range []string{"cluster-coverage", "cluster-slot-balance", "cluster-key-balance", "cluster-config-drift", "cluster-replicas"} {
			if f := finding(t, rep, id); f.Status != doctor.OK || len(f.Evidence) == 0 {
				t.Errorf("%s: %s %s%s, evidence %v; want ok with evidence", id, f.Status, f.Message, f.Reason, f.Evidence)
			}
		}
		per := map[string]int{}
		for _, f := range rep.Findings {
			per[f.ID+"@"+f.Node]++
		}
		for _, n := range rep.Nodes {
			if per["appendfsync-always@"+n.Addr] != 1 || per["somaxconn@"+n.Addr] != 1 {
				t.Errorf("server rule, or host rule reading the server, not run once on node %s: %v", n.Addr, per)
			}
		}
		if per["overcommit-memory@"] != 1 || len(rep.Findings) != 5+6+6+1 {
			t.Errorf("host rule runs once, %d findings in all: %v", len(rep.Findings), per)
		}
	})

	t.Run("sampled", func(t *testing.T) {
		// --sample reads every node twice: counters are judged per node
		// by how much they rose.
		ctx := context.Background()
		f, err := doctor.Gather(ctx, doctor.GatherOptions{Root: "/", Redis: &redisadmin.Options{Addr: seed}, Sample: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := doctor.Run(ctx, f, doctor.Options{Only: []string{"rejected-connections"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Findings) != 6 || rep.Target.Interval == "" {
			t.Fatalf("%d findings, interval %q; want one per node, sampled", len(rep.Findings), rep.Target.Interval)
		}
		for _, fd := range rep.Findings {
			if fd.Node == "" || len(fd.Evidence) == 0 || !strings.Contains(fd.Evidence[0].Note, "rose by") {
				t.Errorf("node %q: %s %v", fd.Node, fd.Status, fd.Evidence)
			}
		}
	})

	t.Run("config drift", func(t *testing.T) {
		odd := c.Replicas[1]
		do(t, odd, "CONFIG", "SET", "hz", "50")
		defer do(t, odd, "CONFIG", "SET", "hz", "10")
		f := finding(t, clusterReport(t, seed), "cluster-config-drift")
		if f.Status != doctor.Fired || !strings.Contains(f.Message, odd.Addr()+` hz = "50"`) || !strings.Contains(f.Message, `"10"`) {
			t.Errorf("%s: %s", f.Status, f.Message)
		}
	})

	t.Run("keys on one primary", func(t *testing.T) {
		fill(t, c, 3000, func(i int) string { return "{pile}:" + strconv.Itoa(i) })
		f := finding(t, clusterReport(t, seed), "cluster-key-balance")
		owner := c.Primaries[ownerOf(bench.HashSlot([]byte("pile")), 3)].Addr()
		if f.Status != doctor.Fired || !strings.Contains(f.Message, owner+" holds") {
			t.Errorf("%s: %s (want %s named)", f.Status, f.Message, owner)
		}
	})

	t.Run("slots served by nobody", func(t *testing.T) {
		// Slots 0-999 hold keys: empty the cluster first, then every
		// node forgets who serves them.
		for _, p := range c.Primaries {
			do(t, p, "FLUSHALL")
		}
		for _, n := range c.Nodes() {
			do(t, n, "CLUSTER", "DELSLOTSRANGE", "0", "999")
		}
		f := finding(t, clusterReport(t, seed), "cluster-coverage")
		if f.Status != doctor.Fired || !strings.Contains(f.Message, "1000 slot(s) served by no primary: 0-999") {
			t.Errorf("%s: %s", f.Status, f.Message)
		}
	})

	t.Run("uneven slots", func(t *testing.T) {
		// The second primary takes the slots the first gave up.
		do(t, c.Primaries[1], "CLUSTER", "ADDSLOTSRANGE", "0", "999")
		waitFor(t, "every node to see slots 0-999 served", func() bool {
			for _, n := range c.Nodes() {
				v := do(t, n, "CLUSTER", "INFO")
				if !strings.Contains(v, "cluster_slots_assigned:16384") || !strings.Contains(v, "cluster_state:ok") {
					return false
				}
			}
			return true
		})
		rep := clusterReport(t, seed)
		f := finding(t, rep, "cluster-slot-balance")
		if f.Status != doctor.Fired || !strings.Contains(f.Message, c.Primaries[1].Addr()+" serves 6461") || !strings.Contains(f.Message, c.Primaries[0].Addr()+" serves 4461") {
			t.Errorf("%s: %s", f.Status, f.Message)
		}
		if f := finding(t, rep, "cluster-coverage"); f.Status != doctor.OK {
			t.Errorf("coverage after the slots came back: %s %s", f.Status, f.Message)
		}
	})

	t.Run("node killed", func(t *testing.T) {
		dead := c.Replicas[2]
		if err := dead.Stop(); err != nil {
			t.Fatal(err)
		}
		rep := clusterReport(t, seed)
		if !rep.HasErrors() {
			t.Error("a node that cannot be read leaves the report complete")
		}
		read := 0
		for _, n := range rep.Nodes {
			switch {
			case n.Addr == dead.Addr():
				if !strings.Contains(n.Error, dead.Addr()) {
					t.Errorf("dead node's error: %q", n.Error)
				}
			case n.Error == "":
				read++
			}
		}
		if read != 5 {
			t.Errorf("%d other nodes read, want 5: %+v", read, rep.Nodes)
		}
		if f := finding(t, rep, "cluster-config-drift"); !strings.Contains(strings.Join(f.Notes, " "), dead.Addr()) {
			t.Errorf("config drift does not say which node it could not compare: %+v", f)
		}
	})
}

// TestClusterFlagOnOneServer: --cluster against a server that is not a
// cluster node is an error; without it the cluster rules do not apply.
func TestClusterFlagOnOneServer(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	yes := true
	_, err := doctor.Gather(ctx, doctor.GatherOptions{Root: "/", Redis: &redisadmin.Options{Addr: s.Addr()}, Cluster: &yes})
	if err == nil || !strings.Contains(err.Error(), "not a cluster node") {
		t.Errorf("--cluster on one server: %v", err)
	}
	f, err := doctor.Gather(ctx, doctor.GatherOptions{Root: "/", Redis: &redisadmin.Options{Addr: s.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := doctor.Run(ctx, f, doctor.Options{Only: []string{"cluster-*"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range rep.Findings {
		if fd.Status != doctor.NotApplicable || len(rep.Nodes) != 0 {
			t.Errorf("%s: %s %s", fd.ID, fd.Status, fd.Reason)
		}
	}
}

// fill writes n keys named by name on the primaries that serve them.
func fill(t *testing.T, c *redisserver.Cluster, n int, name func(int) string) {
	t.Helper()
	var clients []*resp.Client
	for _, p := range c.Primaries {
		clients = append(clients, redistest.Client(t, p))
	}
	for i := range n {
		k := name(i)
		redistest.Do(t, clients[ownerOf(bench.HashSlot([]byte(k)), len(c.Primaries))], "SET", k, "v")
	}
}

// ownerOf is the primary StartCluster gave slot: equal ranges in order.
func ownerOf(slot uint16, primaries int) int {
	for i := range primaries {
		if int(slot) <= (i+1)*16384/primaries-1 {
			return i
		}
	}
	return primaries - 1
}

// do runs one command on s and fails the test on any error.
func do(t *testing.T, s *redisserver.Server, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl, err := s.Client(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	v, err := cl.DoOK(ctx, args...)
	if err != nil {
		t.Fatalf("%v on %s: %v", args, s.Addr(), err)
	}
	return v.Str
}

// waitFor polls cond until it holds, failing the test after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestClusterPrimaryFailed stops a primary whose replica may not fail over
// (cluster-replica-no-failover): once the others mark it fail, CLUSTER
// SHARDS calls it "fail" and cluster-coverage names it with its slots.
func TestClusterPrimaryFailed(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	for _, n := range c.Nodes() {
		do(t, n, "CONFIG", "SET", "cluster-node-timeout", "1000")
	}
	do(t, c.Replicas[2], "CONFIG", "SET", "cluster-replica-no-failover", "yes")
	dead := c.Primaries[2]
	if err := dead.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	waitFor(t, "the seed's CLUSTER SHARDS to call "+dead.Addr()+" fail", func() bool {
		cn, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: c.Seed(), Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer cn.Close()
		shards, err := cn.ClusterShards(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range shards {
			if p, ok := sh.Primary(); ok && p.Addr == dead.Addr() {
				return p.Failed()
			}
		}
		return false
	})
	f := finding(t, clusterReport(t, c.Seed()), "cluster-coverage")
	want := "primary " + dead.Addr() + " is failed (CLUSTER SHARDS health) and serves 5462 slot(s): 10922-16383"
	if f.Status != doctor.Fired || !strings.Contains(f.Message, want) {
		t.Errorf("%s: %s\nwant %q", f.Status, f.Message, want)
	}
}

// TestClusterSeedWithoutClusterNodes: with CLUSTER NODES denied by an ACL
// the seed is still marked (by CLUSTER MYID, or by its INFO run_id when
// MYID is denied too), so the plan keeps the seed's own Redis fixes.
func TestClusterSeedWithoutClusterNodes(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	for _, n := range c.Nodes() {
		do(t, n, "ACL", "SETUSER", "doc", "on", ">pw", "~*", "+@all", "-cluster|nodes")
		do(t, n, "ACL", "SETUSER", "doc2", "on", ">pw", "~*", "+@all", "-cluster|nodes", "-cluster|myid")
	}
	ctx := context.Background()
	for _, user := range []string{"doc", "doc2"} {
		t.Run(user, func(t *testing.T) {
			f, err := doctor.Gather(ctx, doctor.GatherOptions{Root: "/", Redis: &redisadmin.Options{Addr: c.Seed(), Username: user, Password: "pw"}})
			if err != nil {
				t.Fatal(err)
			}
			if f.Cluster.FlagsError == "" {
				t.Fatal("CLUSTER NODES was not denied")
			}
			rep, err := doctor.Run(ctx, f, doctor.Options{Only: []string{"maxmemory"}})
			if err != nil {
				t.Fatal(err)
			}
			var seeds []string
			for _, n := range rep.Nodes {
				if n.Seed {
					seeds = append(seeds, n.Addr)
				}
			}
			if len(seeds) != 1 || seeds[0] != c.Seed() {
				t.Fatalf("seeds %v, want %s", seeds, c.Seed())
			}
			p := rep.Plan(doctor.ReviewedPlan(doctor.Low))
			found := false
			for _, ch := range p.Changes {
				found = found || ch.Target == "maxmemory"
			}
			if !found {
				t.Errorf("the seed's maxmemory fix is not in the plan: changes %+v, notes %q", p.Changes, p.Notes)
			}
		})
	}
}

// infoCalls is how many INFO commands s has answered since CONFIG
// RESETSTAT (INFO commandstats counts a command once it has run, so the
// INFO that asks is not in its own answer).
func infoCalls(t *testing.T, s *redisserver.Server) int64 {
	t.Helper()
	info := redisadmin.ParseInfo(do(t, s, "INFO", "commandstats"))
	for _, c := range info.Commandstats() {
		if c.Command == "info" {
			return c.Calls
		}
	}
	return 0
}

// Doctor reads each server's INFO once: whether the seed is a cluster
// node, and its run_id when no node id names it, come from the INFO that
// is read anyway. A lone server answers one INFO; in a cluster whose ACL
// denies CLUSTER NODES and MYID (the seed is found by run_id) the seed
// answers two (one for the seed connection, one as a node) and every
// other node one.
func TestGatherReadsINFOOnce(t *testing.T) {
	ctx := context.Background()
	s := redistest.Start(t)
	do(t, s, "CONFIG", "RESETSTAT")
	if _, err := doctor.Gather(ctx, doctor.GatherOptions{Root: "/", Redis: &redisadmin.Options{Addr: s.Addr()}}); err != nil {
		t.Fatal(err)
	}
	if n := infoCalls(t, s); n != 1 {
		t.Errorf("one server: %d INFO, want 1", n)
	}
	c := redistest.StartCluster(t, 3, 0)
	for _, n := range c.Nodes() {
		do(t, n, "ACL", "SETUSER", "doc2", "on", ">pw", "~*", "+@all", "-cluster|nodes", "-cluster|myid")
		do(t, n, "CONFIG", "RESETSTAT")
	}
	if _, err := doctor.Gather(ctx, doctor.GatherOptions{Root: "/", Redis: &redisadmin.Options{Addr: c.Seed(), Username: "doc2", Password: "pw"}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes() {
		want := int64(1)
		if n.Addr() == c.Seed() {
			want = 2
		}
		if got := infoCalls(t, n); got != want {
			t.Errorf("node %s: %d INFO, want %d", n.Addr(), got, want)
		}
	}
}
