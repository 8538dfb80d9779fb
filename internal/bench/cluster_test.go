package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"redline/internal/benchdata"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/resp"
)

func TestClusterTopology(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	o := DefaultOptions()
	top, err := fetchTopology(context.Background(), &o, c.Seed())
	if err != nil {
		t.Fatal(err)
	}
	if len(top.nodes) != 3 || top.uncovered() != 0 {
		t.Fatalf("topology: %d primaries, %d slots uncovered; want 3 and 0", len(top.nodes), top.uncovered())
	}
	for i, n := range top.nodes {
		if n.Addr != c.Primaries[i].Addr() || len(n.Replicas) != 1 || n.Slots < 5461 || n.ID == "" {
			t.Errorf("node %d = %+v, want %s with 1 replica and a third of the slots", i, n, c.Primaries[i].Addr())
		}
	}
	// The CLUSTER SLOTS reading of the same cluster gives the same map.
	cl := redistest.Client(t, c.Primaries[1])
	old, err := topologyOf(redisadmin.ParseClusterSlots(redistest.Do(t, cl, "CLUSTER", "SLOTS")))
	if err != nil {
		t.Fatal(err)
	}
	if old.slots != top.slots || len(old.nodes) != 3 || len(old.nodes[2].Replicas) != 1 {
		t.Errorf("CLUSTER SLOTS gives another map: %+v", old.nodes)
	}
	keys, ok := parseCommandKeys(redistest.Do(t, cl, "COMMAND", "INFO", "mset"))
	if !ok || keys.first != 1 || keys.last != -1 || keys.step != 2 || !keys.multi() {
		t.Errorf("COMMAND INFO mset = %+v", keys)
	}
	if _, ok := parseCommandKeys(resp.Value{Type: '*', Elems: []resp.Value{{Null: true}}}); ok {
		t.Error("an unknown command has key positions")
	}
}

// clusterCalls sums cmdstat calls of each command over the primaries, and
// gives each primary's total of the commands in want.
func clusterCalls(t *testing.T, c *redisserver.Cluster, want []string) (map[string]int64, []int64) {
	t.Helper()
	sum := map[string]int64{}
	var per []int64
	for _, s := range c.Primaries {
		info := redisadmin.ParseInfo(redistest.Do(t, redistest.Client(t, s), "INFO", "commandstats").Str)
		var n int64
		for _, cs := range info.Commandstats() {
			sum[cs.Command] += cs.Calls
			if slices.Contains(want, cs.Command) {
				n += cs.Calls
			}
		}
		per = append(per, n)
	}
	return sum, per
}

func clusterOptions(c *redisserver.Cluster) Options {
	o := DefaultOptions()
	o.Addr, o.Seed, o.Cluster = c.Seed(), 1, true
	return o
}

func TestClusterExactCounts(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	o := clusterOptions(c)
	o.Clients, o.Requests, o.Pipeline, o.Threads = 7, 3001, 4, 2
	o.Keys.Space = 1000000
	tests, err := SuiteTests([]string{"set", "get", "incr", "ping_mbulk", "mset"}, true)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := clusterCalls(t, c, nil) // the helper's own PINGs
	for _, test := range tests {
		sum, err := Run(context.Background(), o, test, NewPayload().Next(3))
		if err != nil {
			t.Fatalf("%s: %v", test.Title, err)
		}
		if sum.Requests != o.Requests || sum.Cluster == nil || len(sum.Cluster.Nodes) != 3 {
			t.Fatalf("%s: %d requests, cluster %+v", test.Title, sum.Requests, sum.Cluster)
		}
		// The per-node histograms merge into the total exactly.
		merged := benchdata.NewHistogram(o.Precision)
		for _, n := range sum.Cluster.Nodes {
			merged.Merge(n.Histogram.Histogram)
		}
		if merged.TotalCount() != sum.Requests || !merged.Equals(sum.Histogram.Histogram) {
			t.Errorf("%s: nodes' histograms merge to %d requests (p99 %d ns), total %d (p99 %d ns)", test.Title,
				merged.TotalCount(), merged.ValueAtQuantile(99), sum.Requests, sum.Histogram.ValueAtQuantile(99))
		}
	}
	calls, per := clusterCalls(t, c, []string{"set", "get", "incr", "mset"})
	for _, cmd := range []string{"set", "get", "incr", "ping", "mset"} {
		if calls[cmd]-before[cmd] != o.Requests {
			t.Errorf("cmdstat %s calls over the primaries = %d, want %d", cmd, calls[cmd]-before[cmd], o.Requests)
		}
	}
	// Each primary serves a third of the slots; with 12004 uniform keys
	// (or MSET slots) its share is within 3% of a third (over 6 standard
	// deviations).
	for i, n := range per {
		share := float64(n) / float64(4*o.Requests)
		if share < 0.333-0.03 || share > 0.334+0.03 {
			t.Errorf("primary %d answered %.3f of the keyed requests, want about 1/3", i, share)
		}
	}
}

// migrateSlot moves slot from one primary to another as redis-cli
// --cluster reshard does: IMPORTING on the target, MIGRATING on the
// source, MIGRATE the keys in batches, then SETSLOT NODE on both.
func migrateSlot(t *testing.T, slot int, from, to *redisserver.Server) {
	ctx := context.Background()
	src, dst := redistest.Client(t, from), redistest.Client(t, to)
	// MIGRATE of 2000 keys takes longer than a control connection's
	// usual deadline on a loaded machine; the run goes on meanwhile.
	src.Timeout, dst.Timeout = 30*time.Second, 30*time.Second
	fromID, _ := redisserver.NodeID(ctx, from)
	toID, _ := redisserver.NodeID(ctx, to)
	s := strconv.Itoa(slot)
	mustOK := func(c *resp.Client, args ...string) {
		if v := redistest.Do(t, c, args...); v.IsError() {
			t.Errorf("%v: %s", args[:min(len(args), 7)], v.Str)
		}
	}
	mustOK(dst, "CLUSTER", "SETSLOT", s, "IMPORTING", fromID)
	mustOK(src, "CLUSTER", "SETSLOT", s, "MIGRATING", toID)
	for {
		keys := redistest.Do(t, src, "CLUSTER", "GETKEYSINSLOT", s, "2000")
		if len(keys.Elems) == 0 {
			break
		}
		args := []string{"MIGRATE", to.Host, strconv.Itoa(to.Port), "", "0", "5000", "KEYS"}
		for _, k := range keys.Elems {
			args = append(args, k.Str)
		}
		mustOK(src, args...)
	}
	mustOK(dst, "CLUSTER", "SETSLOT", s, "NODE", toID)
	mustOK(src, "CLUSTER", "SETSLOT", s, "NODE", toID)
}

func dbsize(t *testing.T, c *redisserver.Cluster) int64 {
	var n int64
	for _, s := range c.Primaries {
		v := redistest.Do(t, redistest.Client(t, s), "DBSIZE")
		k, _ := strconv.ParseInt(v.Str, 10, 64)
		n += k
	}
	return n
}

// TestClusterReshardDuringRun moves the slot every key of the run hashes
// to (one hash tag) while the run writes: requests meet ASK while the keys
// move and MOVED after; each is followed, none is counted twice or as an
// error, and every key written is in the cluster at the end.
func TestClusterReshardDuringRun(t *testing.T) {
	for _, rate := range []float64{0, 20000} {
		t.Run(fmt.Sprintf("rate=%v", rate), func(t *testing.T) {
			c := redistest.StartCluster(t, 3, 0)
			o := clusterOptions(c)
			n := int64(200000) // long enough for the slot to move well before the end
			if rate > 0 {
				n = 100000
			}
			o.Clients, o.Requests, o.Pipeline, o.Threads, o.Rate = 6, n, 4, 2, rate
			o.Keys = KeyOptions{Space: uint64(n), Dist: KeySequential}
			test := CustomTest([]string{"SET", "{hot}:__rand_int__", "x"})
			slot := int(HashSlot([]byte("{hot}")))
			owner := func() int { // which primary serves the slot now
				for i, p := range c.Primaries {
					v := redistest.Do(t, redistest.Client(t, p), "CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(slot))
					if k, _ := strconv.Atoi(v.Str); k > 0 {
						return i
					}
				}
				return -1
			}
			start := make(chan struct{})
			var once sync.Once
			o.ProgressInterval = 20 * time.Millisecond
			o.Progress = func(p Progress) {
				if p.Requests > n/20 {
					once.Do(func() { close(start) })
				}
			}
			moved := make(chan struct{})
			go func() {
				defer close(moved)
				<-start
				from := owner()
				t0 := time.Now()
				migrateSlot(t, slot, c.Primaries[from], c.Primaries[(from+1)%3])
				t.Logf("migrated in %v", time.Since(t0))
			}()
			sum, err := Run(context.Background(), o, test, nil)
			once.Do(func() { close(start) })
			<-moved
			if err != nil {
				t.Fatal(err)
			}
			var answered int64
			for _, nr := range sum.Cluster.Nodes {
				answered += nr.Requests
			}
			calls, _ := clusterCalls(t, c, nil)
			t.Logf("moved %d, asked %d, refreshes %d", sum.Cluster.Moved, sum.Cluster.Asked, sum.Cluster.Refreshes)
			if sum.Requests != n || answered != n || calls["set"] != n {
				t.Errorf("requests %d, answered by nodes %d, SET calls %d; want %d each", sum.Requests, answered, calls["set"], n)
			}
			if sum.Cluster.Moved == 0 {
				t.Error("no MOVED followed: the run ended before the slot moved")
			}
			if keys := dbsize(t, c); keys != n {
				t.Errorf("%d keys in the cluster after writing %d distinct ones", keys, n)
			}
		})
	}
}

// TestClusterNodeKilled kills a primary mid-run: the run ends with an
// error that names that node, and keeps what it measured.
func TestClusterNodeKilled(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	o := clusterOptions(c)
	o.Clients, o.Requests, o.Keys.Space = 4, 50_000_000, 100000
	victim := c.Primaries[1]
	var once sync.Once
	o.ProgressInterval = 20 * time.Millisecond
	o.Progress = func(p Progress) {
		if p.Requests > 2000 {
			once.Do(func() { syscall.Kill(victim.Pid(), syscall.SIGKILL) })
		}
	}
	tests, _ := SuiteTests([]string{"set"}, true)
	sum, err := Run(context.Background(), o, tests[0], nil)
	if err == nil || !strings.Contains(err.Error(), victim.Addr()) {
		t.Fatalf("error %v, want one naming the killed node %s", err, victim.Addr())
	}
	if sum == nil || sum.Requests < 2000 || sum.Error == "" || len(sum.Cluster.Nodes) != 3 {
		t.Fatalf("partial results lost: %+v", sum)
	}
	t.Logf("%v after %d requests", err, sum.Requests)
}

// TestClusterReadFromReplicas: with a replica per primary, GETs go to the
// replicas (READONLY connections) and SETs to the primaries, exactly -n
// each.
func TestClusterReadFromReplicas(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	o := clusterOptions(c)
	o.Clients, o.Requests, o.Pipeline, o.ReadFromReplicas = 6, 2000, 3, true
	o.Keys.Space = 1000
	test := Test{Title: "SET:GET", Mix: []MixPart{{Name: "SET", Args: []string{"SET", "k:__rand_int__", "v"}, Weight: 1},
		{Name: "GET", Args: []string{"GET", "k:__rand_int__"}, Weight: 1}}}
	sum, err := Run(context.Background(), o, test, nil)
	if err != nil {
		t.Fatal(err)
	}
	count := func(nodes []*redisserver.Server, cmd string) int64 {
		var n int64
		for _, s := range nodes {
			info := redisadmin.ParseInfo(redistest.Do(t, redistest.Client(t, s), "INFO", "commandstats").Str)
			for _, cs := range info.Commandstats() {
				if cs.Command == cmd {
					n += cs.Calls
				}
			}
		}
		return n
	}
	// Every GET on a replica, every SET on a primary, 2000 in all. Each
	// event loop (one per primary) walks the 1:1 mix from its own step
	// over the requests it claims, so the split is 1000:1000 to within
	// one request a loop.
	gets, sets := count(c.Replicas, "get"), count(c.Primaries, "set")
	if gets+sets != 2000 || gets < 997 || gets > 1003 {
		t.Errorf("replicas answered %d GETs and primaries %d SETs, want 2000 in all, about 1000 each", gets, sets)
	}
	if got := count(c.Primaries, "get"); got != 0 {
		t.Errorf("primaries answered %d GETs, want 0", got)
	}
	if len(sum.Cluster.Nodes) != 6 || sum.Cluster.Nodes[3].Role != "replica" || sum.Cluster.Nodes[3].Requests == 0 {
		t.Errorf("per node: %+v", sum.Cluster.Nodes)
	}
}

// TestClusterRedirectLoopEnds: two nodes that send a request back and
// forth (a slot MIGRATING on its owner while the target is not IMPORTING
// it: the owner answers ASK, the target MOVED back) end the run with an
// error naming the loop, not a loop that never ends.
func TestClusterRedirectLoopEnds(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	ctx := context.Background()
	slot := int(HashSlot([]byte("{loop}")))
	var owner, other *redisserver.Server
	for i, p := range c.Primaries {
		if owner == nil && slotOwnedBy(t, p, slot) {
			owner, other = p, c.Primaries[(i+1)%3]
		}
	}
	if owner == nil {
		t.Fatal("no primary owns the slot")
	}
	otherID, _ := redisserver.NodeID(ctx, other)
	if v := redistest.Do(t, redistest.Client(t, owner), "CLUSTER", "SETSLOT", strconv.Itoa(slot), "MIGRATING", otherID); v.IsError() {
		t.Fatal(v.Str)
	}
	o := clusterOptions(c)
	o.Clients, o.Requests = 1, 10
	_, err := Run(ctx, o, CustomTest([]string{"GET", "{loop}:absent"}), nil)
	if err == nil || !strings.Contains(err.Error(), "was redirected 16 times") {
		t.Fatalf("err = %v; want the redirect loop named", err)
	}
}

// slotOwnedBy says whether p serves slot by its own CLUSTER SLOTS view.
func slotOwnedBy(t *testing.T, p *redisserver.Server, slot int) bool {
	v := redistest.Do(t, redistest.Client(t, p), "CLUSTER", "SLOTS")
	for _, r := range v.Elems {
		if len(r.Elems) < 3 {
			continue
		}
		lo, _ := strconv.Atoi(r.Elems[0].Str)
		hi, _ := strconv.Atoi(r.Elems[1].Str)
		port, _ := strconv.Atoi(r.Elems[2].Elems[1].Str)
		if slot >= lo && slot <= hi && port == p.Port {
			return true
		}
	}
	return false
}
