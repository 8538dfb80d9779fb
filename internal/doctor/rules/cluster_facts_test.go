package rules

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"redline/internal/doctor"
	"redline/internal/redisadmin"
)

// The cluster rules' cases: a healthy cluster of three primaries with a
// replica each (what redistest.StartCluster builds), and one mutation each
// that makes a rule fire. TestClusterDoctor (internal/doctor) checks the
// same rules against real clusters.
func init() {
	for id, mut := range map[string]func(*doctor.Cluster){
		"cluster-coverage": func(c *doctor.Cluster) {
			c.Shards[1].Slots = []redisadmin.SlotRange{{Start: 5461, End: 6000}}
		},
		"cluster-slot-balance": func(c *doctor.Cluster) {
			c.Shards[0].Slots = []redisadmin.SlotRange{{Start: 0, End: 3999}}
			c.Shards[1].Slots = []redisadmin.SlotRange{{Start: 4000, End: 10922}}
		},
		"cluster-key-balance": func(c *doctor.Cluster) { setKeys(c.Nodes[0], 9000) },
		"cluster-config-drift": func(c *doctor.Cluster) {
			n := c.Nodes[2].Redis
			n.Config = maps.Clone(n.Config)
			n.Config["hz"] = "50"
		},
		"cluster-replicas": func(c *doctor.Cluster) { c.Shards[2].Nodes = c.Shards[2].Nodes[:1] },
	} {
		healthyFor[id] = withCluster
		fires[id] = func(f *doctor.Facts) { withCluster(f); mut(f.Cluster) }
	}
}

func withCluster(f *doctor.Facts) { f.Cluster = testCluster() }

// testCluster is three shards of a primary and a replica on 10.0.0.1,
// ports 7000-7005, each primary holding 1000 keys.
func testCluster() *doctor.Cluster {
	c := &doctor.Cluster{Seed: "10.0.0.1:7000", Flags: map[string][]string{}}
	for i := range 3 {
		p := redisadmin.ClusterMember{ID: fmt.Sprintf("p%d", i), Addr: fmt.Sprintf("10.0.0.1:%d", 7000+i), Role: "master", Health: "online"}
		r := redisadmin.ClusterMember{ID: fmt.Sprintf("r%d", i), Addr: fmt.Sprintf("10.0.0.1:%d", 7003+i), Role: "replica", Health: "online"}
		lo, hi := i*16384/3, (i+1)*16384/3-1
		c.Shards = append(c.Shards, redisadmin.ClusterShard{Slots: []redisadmin.SlotRange{{Start: lo, End: hi}}, Nodes: []redisadmin.ClusterMember{p, r}})
		c.Flags[p.ID], c.Flags[r.ID] = []string{"master"}, []string{"slave"}
		for _, m := range []redisadmin.ClusterMember{p, r} {
			role := map[string]string{"master": "primary", "replica": "replica"}[m.Role]
			rf := healthyRedis()
			rf.Addr = m.Addr
			n := &doctor.ClusterNodeFacts{Node: doctor.Node{Addr: m.Addr, ID: m.ID, Role: role, Shard: i + 1, Version: rf.Version, Seed: m.Addr == c.Seed},
				Redis: rf, ClusterInfo: redisadmin.ParseInfo("cluster_state:ok\r\ncluster_slots_assigned:16384\r\n")}
			setKeys(n, map[string]int64{"primary": 1000, "replica": 1000}[role])
			c.Nodes = append(c.Nodes, n)
		}
	}
	c.Flags["p0"] = append(c.Flags["p0"], "myself")
	return c
}

// setKeys gives the node's INFO a keyspace of n keys.
func setKeys(n *doctor.ClusterNodeFacts, keys int64) {
	n.Redis.Info = redisadmin.ParseInfo(healthyInfo + fmt.Sprintf("\r\n# Keyspace\r\ndb0:keys=%d,expires=0,avg_ttl=0\r\n", keys))
}

// Cluster nodes on one host share its memory: two local nodes of the
// same 32 GiB cgroup with 8 GiB of maxmemory each fit; eight do not, and
// the limit each is judged against says so.
func TestMaxmemorySharedByLocalNodes(t *testing.T) {
	f := healthyFacts()
	f.Node = &doctor.Node{Addr: "10.0.0.1:6379", Role: "primary", Shard: 1, Local: true}
	p := f.Host.Processes[0]
	for i := 1; i < 2; i++ {
		q := p
		q.PID = p.PID + 1000*i
		f.Host.Processes = append(f.Host.Processes, q)
	}
	if fd := run(t, f, "maxmemory"); fd.Status != doctor.OK {
		t.Errorf("2 nodes × 8 GiB in 32 GiB: %s %s", fd.Status, fd.Message)
	}
	for i := 2; i < 8; i++ {
		q := p
		q.PID = p.PID + 1000*i
		f.Host.Processes = append(f.Host.Processes, q)
	}
	fd := run(t, f, "maxmemory")
	if fd.Status != doctor.Fired || !strings.Contains(fmt.Sprint(fd.Evidence), "shared by 8 cluster nodes on this host") {
		t.Errorf("8 nodes × 8 GiB in 32 GiB: %s %s %v", fd.Status, fd.Message, fd.Evidence)
	}
	// A node on another host is not judged against this host's memory.
	f.Redis.Process.Local = false
	if fd := run(t, f, "maxmemory"); fd.Status != doctor.OK || len(fd.Evidence) != 1 {
		t.Errorf("a node on another host: %s %s %v", fd.Status, fd.Message, fd.Evidence)
	}
}

// Without the seed's CLUSTER NODES (an ACL may deny it) coverage cannot
// say no node is failing: not checked, with the reason; a real problem
// still fires.
func TestCoverageWithoutNodeFlags(t *testing.T) {
	f := healthyFacts()
	withCluster(f)
	f.Cluster.Flags, f.Cluster.FlagsError = nil, "CLUSTER NODES on 10.0.0.1:7000: NOPERM"
	if fd := run(t, f, "cluster-coverage"); fd.Status != doctor.NotChecked || !strings.Contains(fd.Reason, "NOPERM") {
		t.Errorf("%s: %s", fd.Status, fd.Reason)
	}
	f.Cluster.Shards[0].Slots = nil
	if fd := run(t, f, "cluster-coverage"); fd.Status != doctor.Fired || !strings.Contains(fd.Message, "0-5460") {
		t.Errorf("%s: %s", fd.Status, fd.Message)
	}
}

// A cluster of three shards seen from the seed's host: the seed local,
// the other nodes elsewhere, one node with another hz, one that cannot be
// reached, in all three formats.
func TestGoldenCluster(t *testing.T) {
	f := healthyFacts()
	withCluster(f)
	for i, n := range f.Cluster.Nodes {
		n.Pid = 100 + i
		n.Redis.Process = redisadmin.Process{Pid: n.Pid, Local: n.Seed, Reason: fmt.Sprintf("no process %d readable on this host: the server runs on another host", n.Pid)}
		n.Local = n.Seed
	}
	drift := f.Cluster.Nodes[2].Redis
	drift.Config = maps.Clone(drift.Config)
	drift.Config["hz"] = "50"
	down := f.Cluster.Nodes[5]
	down.Redis, down.ClusterInfo, down.Version = nil, nil, ""
	down.Error = "connect to Redis at 10.0.0.1:7005: dial tcp 10.0.0.1:7005: connect: connection refused (is redis-server running and reachable?)"
	rep, err := doctor.Run(context.Background(), f, doctor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !fired(rep, "cluster-config-drift") || !rep.HasErrors() {
		t.Errorf("drift fired %v, errors %v", fired(rep, "cluster-config-drift"), rep.HasErrors())
	}
	compareGolden(t, "cluster", renderAll(t, rep))
}

// ip_local_reserved_ports is one list for the host: cluster nodes on this
// host get one finding whose fix reserves every local node's client and
// bus ports, not one fix per node each setting the whole list.
func TestReservedPortsCombinesLocalNodes(t *testing.T) {
	f := healthyFacts()
	withCluster(f)
	f.Host.Sysctls["net.ipv4.ip_local_port_range"] = "1025 65530"
	f.Host.Sysctls["net.ipv4.ip_local_reserved_ports"] = "7003"
	// The primaries run here, in the inspector's network namespace (a
	// process whose namespace is unknown is judged with them too).
	for i, n := range f.Cluster.Nodes {
		n.Pid, n.Local = 100+i, n.Role == "primary"
		n.Redis.Process = redisadmin.Process{Pid: n.Pid, Local: n.Local}
		if n.Local && n.Pid != 100 && n.Pid != 104 {
			p := f.Host.Processes[0]
			p.PID = n.Pid
			f.Host.Processes = append(f.Host.Processes, p)
		}
		port := strings.TrimPrefix(n.Addr, "10.0.0.1:")
		n.Redis.Info = redisadmin.ParseInfo(strings.Replace(healthyInfo, "tcp_port:6379", "tcp_port:"+port, 1))
	}
	rep, err := doctor.Run(context.Background(), f, doctor.Options{Only: []string{"reserved-ports"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 {
		t.Fatalf("%d findings, want one for the host: %+v", len(rep.Findings), rep.Findings)
	}
	fd := rep.Findings[0]
	want := "7003,7000,17000,7001,17001,7002,17002"
	if fd.Status != doctor.Fired || fd.Fix == nil || len(fd.Fix.Changes) != 1 || fd.Fix.Changes[0].Value != want {
		t.Fatalf("%s %s, fix %+v; want ip_local_reserved_ports %s", fd.Status, fd.Message, fd.Fix, want)
	}
	if !strings.HasPrefix(fd.Message, "ports 7000,17000,7001,17001,7002,17002 are inside") {
		t.Errorf("message %q", fd.Message)
	}
	// One port left unreserved is "port N is".
	f.Host.Sysctls["net.ipv4.ip_local_reserved_ports"] = "7000-7002,17000,17001"
	rep, _ = doctor.Run(context.Background(), f, doctor.Options{Only: []string{"reserved-ports"}})
	if fd := rep.Findings[0]; !strings.HasPrefix(fd.Message, "port 17002 is inside") {
		t.Errorf("message %q", fd.Message)
	}
}

// The even share is redis-cli's integer (int)(16384/primaries): with seven
// primaries it is 2340, and a primary with 2388 slots is 2.01 % off it
// (over the threshold) where the exact share 2340.57 would make it 1.99 %.
func TestSlotBalanceUsesRedisCliShare(t *testing.T) {
	f := healthyFacts()
	withCluster(f)
	f.Cluster.Shards = nil
	start := 0
	for i, n := range []int{2388, 2333, 2333, 2333, 2333, 2332, 2332} {
		p := redisadmin.ClusterMember{Addr: fmt.Sprintf("10.0.0.%d:7000", i+1), Role: "master"}
		f.Cluster.Shards = append(f.Cluster.Shards, redisadmin.ClusterShard{Slots: []redisadmin.SlotRange{{Start: start, End: start + n - 1}}, Nodes: []redisadmin.ClusterMember{p}})
		start += n
	}
	fd := run(t, f, "cluster-slot-balance")
	if fd.Status != doctor.Fired || !strings.Contains(fd.Message, "even share 2340: 10.0.0.1:7000 serves 2388 (2.0 % off)") {
		t.Errorf("%s: %s", fd.Status, fd.Message)
	}
}

// Standalone servers share the host's memory as cluster nodes do (issue
// 41): the fix of maxmemory 0 on one of four servers is 80% of a quarter
// of the host, not of all of it.
func TestMaxmemoryFixIsAShareWithSeveralServers(t *testing.T) {
	f := healthyFacts()
	f.Redis.Config["maxmemory"] = "0"
	p := f.Host.Processes[0]
	p.Cgroup = nil
	f.Host.Processes[0] = p
	for i := 1; i < 4; i++ {
		q := p
		q.PID = p.PID + i
		f.Host.Processes = append(f.Host.Processes, q)
	}
	total := *f.Host.Memory.MemTotal
	fd := run(t, f, "maxmemory")
	if fd.Status != doctor.Fired || fd.Fix == nil || len(fd.Fix.Changes) != 1 {
		t.Fatalf("%s %s %+v", fd.Status, fd.Message, fd.Fix)
	}
	if got, want := fd.Fix.Changes[0].Value, fmt.Sprint(total/4/10*8); got != want {
		t.Errorf("maxmemory fix %s, want %s (80%% of a quarter of %d)", got, want, total)
	}
	if !strings.Contains(fmt.Sprint(fd.Evidence), "shared by 4 redis-servers on this host") {
		t.Errorf("evidence does not say the memory is shared: %v", fd.Evidence)
	}
}
