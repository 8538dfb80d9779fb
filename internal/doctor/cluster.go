package doctor

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"redline/internal/host"
	"redline/internal/redisadmin"
)

// Cluster is a Redis Cluster as doctor read it: the topology the seed
// gives (redisadmin.ClusterShards, the reader bench routes by), the seed's
// view of every node's flags, and each node's own facts.
type Cluster struct {
	// Seed is the address doctor was given.
	Seed   string
	Shards []redisadmin.ClusterShard
	// Flags are each node's flags in the seed's CLUSTER NODES, by node id;
	// FlagsError says why they are missing (an ACL that denies CLUSTER
	// NODES): no node is then known failing, and the seed is marked by
	// CLUSTER MYID, its run_id or its address instead (markSeedByID).
	Flags      map[string][]string
	FlagsError string
	// Nodes are every node the topology names, primaries and replicas,
	// in shard order (the shard serving slot 0 first), primary first.
	Nodes []*ClusterNodeFacts
}

// ClusterNodeFacts is what doctor read from one node.
type ClusterNodeFacts struct {
	Node
	Redis, PrevRedis *redisadmin.Facts
	// ClusterInfo is the node's CLUSTER INFO (cluster_state ...).
	ClusterInfo *redisadmin.Info
}

// Node labels one cluster node in a report: its findings carry its Addr.
type Node struct {
	Addr string `json:"addr"`
	ID   string `json:"id,omitempty"`
	// Role is "primary" or "replica"; Shard numbers the shards from 1 in
	// the order of their first slot (shards serving no slot come last).
	Role  string `json:"role"`
	Shard int    `json:"shard"`
	// Seed marks the node doctor was pointed at.
	Seed    bool   `json:"seed,omitempty"`
	Version string `json:"redis_version,omitempty"`
	// Local says the node's process is on this host (Pid).
	Local bool `json:"local"`
	Pid   int  `json:"pid,omitempty"`
	// Error says why the node could not be read: doctor checked the
	// others and the report is incomplete.
	Error string `json:"error,omitempty"`
}

// Label is "127.0.0.1:7001 (primary, shard 2)".
func (n Node) Label() string {
	return fmt.Sprintf("%s (%s, shard %d)", n.Addr, n.Role, n.Shard)
}

// Primaries returns the reachable and unreachable primaries.
func (c *Cluster) Primaries() []*ClusterNodeFacts {
	var out []*ClusterNodeFacts
	for _, n := range c.Nodes {
		if n.Role == "primary" {
			out = append(out, n)
		}
	}
	return out
}

// Unreachable lists the nodes that could not be read, for rule messages.
func (c *Cluster) Unreachable() []string {
	var out []string
	for _, n := range c.Nodes {
		if n.Redis == nil {
			out = append(out, n.Addr)
		}
	}
	return out
}

// nodesOf lists the topology's nodes in shard order: shards by their
// first slot, those without slots after, by primary address.
func nodesOf(shards []redisadmin.ClusterShard) []*ClusterNodeFacts {
	order := slices.Clone(shards)
	slices.SortStableFunc(order, func(a, b redisadmin.ClusterShard) int {
		return cmp.Or(cmp.Compare(firstSlot(a), firstSlot(b)), strings.Compare(firstAddr(a), firstAddr(b)))
	})
	var out []*ClusterNodeFacts
	for i, sh := range order {
		for _, m := range sh.Nodes {
			role := "replica"
			if m.Role == "master" {
				role = "primary"
			}
			out = append(out, &ClusterNodeFacts{Node: Node{Addr: m.Addr, ID: m.ID, Role: role, Shard: i + 1}})
		}
	}
	return out
}

func firstSlot(s redisadmin.ClusterShard) int {
	first := redisadmin.ClusterSlots
	for _, r := range s.Slots {
		first = min(first, r.Start)
	}
	return first
}

func firstAddr(s redisadmin.ClusterShard) string {
	if len(s.Nodes) == 0 {
		return ""
	}
	return s.Nodes[0].Addr
}

// gatherCluster reads the topology from the seed (whose INFO is seedInfo),
// then every node and the host (once, with every local node's process),
// twice when sampling. A node that cannot be read keeps its error; the
// others are still read.
func gatherCluster(ctx context.Context, fs *host.FS, seed *redisadmin.Conn, seedInfo *redisadmin.Info, o GatherOptions, f *Facts) (*Facts, error) {
	shards, err := seed.ClusterShards(ctx)
	if err != nil {
		return nil, err
	}
	flags, err := seed.ClusterNodeFlags(ctx)
	cl := &Cluster{Seed: seed.Addr(), Shards: shards, Flags: flags, Nodes: nodesOf(shards)}
	if err != nil {
		cl.FlagsError = err.Error()
	}
	if len(cl.Nodes) == 0 {
		return nil, fmt.Errorf("the cluster at %s lists no node (CLUSTER SHARDS is empty)", seed.Addr())
	}
	f.Cluster = cl
	seedRunID := markSeedByID(ctx, seed, seedInfo, cl)
	read := func() (*host.Snapshot, error) {
		hopts := o.Host
		hopts.PIDs = nil
		readNodes(ctx, cl.Nodes, o, seedRunID)
		markSeedByAddr(cl)
		for _, n := range cl.Nodes {
			if n.Local {
				hopts.PIDs = append(hopts.PIDs, n.Pid)
			}
		}
		snap, err := host.Read(fs, hopts)
		if err != nil {
			return nil, fmt.Errorf("read host %s: %w", fs.Root(), err)
		}
		return snap, nil
	}
	if f.Host, err = read(); err != nil {
		return nil, err
	}
	if o.Sample > 0 {
		if err := sleep(ctx, o.Sample); err != nil {
			return nil, err
		}
		f.Prev = f.Host
		if f.Host, err = read(); err != nil {
			return nil, err
		}
		f.Interval = o.Sample
	}
	return f, nil
}

// markSeedByID marks the node doctor was pointed at by its node id: the
// "myself" flag of the seed's CLUSTER NODES, else the seed's CLUSTER MYID.
// When neither names a node (CLUSTER NODES and MYID denied by an ACL, or
// CLUSTER SLOTS of an old server without ids) it returns the seed's INFO
// run_id (from seedInfo, already read), which readNode compares with each
// node's; markSeedByAddr is the last resort. The seed's Redis fixes reach
// the plan only once it is marked.
func markSeedByID(ctx context.Context, seed *redisadmin.Conn, seedInfo *redisadmin.Info, cl *Cluster) (runID string) {
	id := ""
	for nid, flags := range cl.Flags {
		if slices.Contains(flags, "myself") {
			id = nid
		}
	}
	if id == "" {
		if v, err := seed.Do(ctx, "CLUSTER", "MYID"); err == nil {
			id = v.Str
		}
	}
	for _, n := range cl.Nodes {
		if id != "" && n.ID == id {
			n.Seed = true
			return ""
		}
	}
	runID, _ = seedInfo.Get("run_id")
	return runID
}

// markSeedByAddr marks the node whose address is the one doctor dialed
// when neither its id nor its run_id identified the seed.
func markSeedByAddr(cl *Cluster) {
	if slices.ContainsFunc(cl.Nodes, func(n *ClusterNodeFacts) bool { return n.Seed }) {
		return
	}
	for _, n := range cl.Nodes {
		if n.Addr == cl.Seed {
			n.Seed = true
			return
		}
	}
}

// nodeReaders is how many nodes are read at once: a slow or silent node
// costs its own deadline, not one per node after it.
const nodeReaders = 6

// readNodes reads every node, nodeReaders at a time; each keeps its
// previous read in PrevRedis and its place in the topology order.
func readNodes(ctx context.Context, nodes []*ClusterNodeFacts, o GatherOptions, seedRunID string) {
	sem := make(chan struct{}, nodeReaders)
	var wg sync.WaitGroup
	for _, n := range nodes {
		n.PrevRedis = n.Redis
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			readNode(ctx, n, o, seedRunID)
		}()
	}
	wg.Wait()
}

// readNode dials one node with the seed's credentials and reads what the
// per-node rules and the cluster rules need; a node whose INFO run_id is
// seedRunID is the seed. Every round trip has the admin connection's
// deadline.
func readNode(ctx context.Context, n *ClusterNodeFacts, o GatherOptions, seedRunID string) {
	ro := *o.Redis
	ro.Network, ro.Addr = "tcp", n.Addr
	n.Redis, n.ClusterInfo, n.Error = nil, nil, ""
	n.Version, n.Local, n.Pid = "", false, 0 // a second reading that fails keeps nothing of the first
	if ro.Password != "" {
		seed := o.Redis.Addr
		if o.Redis.Network == "unix" {
			seed = "127.0.0.1:0" // a socket's server is on this host
		}
		if err := redisadmin.NodeGetsPassword(seed, n.Addr, o.ClusterAuthAny); err != nil {
			n.Error = err.Error()
			return
		}
	}
	c, err := redisadmin.Dial(ctx, ro)
	if err != nil {
		n.Error = err.Error()
		return
	}
	defer c.Close()
	info, err := redisadmin.ReadInfo(ctx, c) // before Collect: whether --pid is this node's depends on its run_id
	if err != nil {
		n.Error = err.Error()
		return
	}
	if id, _ := info.Get("run_id"); seedRunID != "" && id == seedRunID {
		n.Seed = true
	}
	co := redisadmin.CollectOptions{Info: info}
	if n.Seed {
		co.Pid = o.Pid
	}
	rf, err := redisadmin.Collect(ctx, c, co)
	if err != nil {
		n.Error = err.Error()
		return
	}
	if n.ClusterInfo, err = c.ClusterInfo(ctx); err != nil {
		n.Error = err.Error()
		return
	}
	n.Redis, n.Version = rf, rf.Version
	n.Local, n.Pid = rf.Process.Local, rf.Process.Pid
}

// perNode reports whether a rule judges one server: it runs once per
// cluster node.
func perNode(r Rule) bool { return r.Needs&(NeedRedis|NeedRedisProcess|PerServer) != 0 }

// runCluster runs cluster rules once over the whole cluster, server rules
// once per node that was read, host rules that read the server once per
// node on this host, and the other host rules once.
func runCluster(r Rule, f *Facts) []Finding {
	local := r.Needs&ReadsRedis != 0 && slices.ContainsFunc(f.Cluster.Nodes, func(n *ClusterNodeFacts) bool { return n.Redis != nil && n.Local })
	switch {
	case r.Needs&NeedCluster != 0:
		return []Finding{runRule(r, f)}
	case !perNode(r) && !local:
		g := *f
		g.Cluster = nil
		return runForEachServer(r, &g)
	case local && r.Needs&CombinesNodes != 0:
		return runLocalNodes(r, f)
	}
	var out []Finding
	for _, n := range f.Cluster.Nodes {
		if n.Redis == nil || local && !n.Local {
			continue // Report.Nodes carries its error; a host rule judges this host's nodes
		}
		g := *f
		g.Cluster, g.Redis, g.PrevRedis, g.Node = nil, n.Redis, n.PrevRedis, &n.Node
		fd := runRule(r, &g)
		fd.Node = n.Addr
		out = append(out, fd)
	}
	return out
}

// runLocalNodes runs a CombinesNodes rule once over the local nodes of
// each network namespace (byNetNS, a node whose namespace is unknown with
// the first known), judged through the first of them.
func runLocalNodes(r Rule, f *Facts) []Finding {
	groups := localNodesByNetNS(f)
	var out []Finding
	for _, nodes := range groups {
		g := *f
		g.Cluster, g.nodes = nil, nodes
		g.Redis, g.PrevRedis = nodes[0].Redis, nodes[0].PrevRedis
		fd := runRule(r, &g)
		if len(groups) > 1 {
			labelled(&fd, nodesLabel(nodes))
		}
		out = append(out, fd)
	}
	return out
}

// localNodesByNetNS groups the local nodes read by network namespace.
func localNodesByNetNS(f *Facts) [][]*ClusterNodeFacts {
	byPid := map[int]*ClusterNodeFacts{}
	var pids []int
	for _, n := range f.Cluster.Nodes {
		if n.Redis != nil && n.Local {
			byPid[n.Pid] = n
			pids = append(pids, n.Pid)
		}
	}
	var groups [][]*ClusterNodeFacts
	for _, g := range byNetNS(f.Host, pids, true) {
		nodes := make([]*ClusterNodeFacts, len(g))
		for i, pid := range g {
			nodes[i] = byPid[pid]
		}
		groups = append(groups, nodes)
	}
	return groups
}

// nodesLabel names the local nodes a finding judged together.
func nodesLabel(nodes []*ClusterNodeFacts) string {
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr
	}
	if len(nodes) == 1 {
		return "node " + addrs[0] + ": "
	}
	return "nodes " + strings.Join(addrs, ", ") + " (one network namespace): "
}

// labelled starts a finding's message and reason with who it judged.
func labelled(fd *Finding, who string) {
	fd.Message, fd.Reason = prefixed(who, fd.Message), prefixed(who, fd.Reason)
}

func prefixed(who, s string) string {
	if s == "" {
		return s
	}
	return who + s
}

// clusterNodes is the report's list of nodes.
func clusterNodes(c *Cluster) []Node {
	out := make([]Node, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Node
	}
	return out
}
