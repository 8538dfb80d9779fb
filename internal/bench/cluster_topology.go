package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"redline/internal/redisadmin"
	"redline/internal/resp"
)

// noOwner marks a slot no primary serves.
const noOwner = 0xFFFF

// ClusterNode is one primary of a cluster, as the topology names it.
type ClusterNode struct {
	ID       string
	Addr     string // host:port the node advertises
	Slots    int    // how many slots it serves
	Replicas []string
}

// clusterTopology is which primary serves each slot.
type clusterTopology struct {
	nodes []ClusterNode
	slots [ClusterSlots]uint16 // index into nodes, or noOwner
}

// uncovered counts the slots no primary serves.
func (t *clusterTopology) uncovered() int {
	n := 0
	for _, s := range t.slots {
		if s == noOwner {
			n++
		}
	}
	return n
}

// adminOptions is how the run's control connections reach addr.
func (o *Options) adminOptions(addr string) redisadmin.Options {
	return redisadmin.Options{
		Network: o.Network, Addr: addr, Username: o.User, Password: o.Password, TLS: o.TLS,
		Timeout: cmp.Or(o.Timeout, resp.DefaultTimeout), NetNS: o.NetNS,
	}
}

// fetchTopology asks addr for the cluster's shards (redisadmin reads
// CLUSTER SHARDS, or CLUSTER SLOTS on older servers) and keeps what
// routing needs: each shard's primary, its online replicas, its slots.
func fetchTopology(ctx context.Context, o *Options, addr string) (*clusterTopology, error) {
	c, err := redisadmin.Dial(ctx, o.adminOptions(addr))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	shards, err := c.ClusterShards(ctx)
	if errors.Is(err, redisadmin.ErrNotCluster) {
		return nil, fmt.Errorf("--cluster: %w; drop --cluster to benchmark it as one server", err)
	}
	if err != nil {
		return nil, err
	}
	return topologyOf(shards)
}

// slotRange is slots start..end (inclusive) served by nodes[node].
type slotRange struct{ start, end, node int }

// topologyOf keeps, per shard that has a primary and slots, the primary
// and its replicas that are online (or whose health CLUSTER SLOTS does
// not tell: it lists no failed replica).
func topologyOf(shards []redisadmin.ClusterShard) (*clusterTopology, error) {
	var ranges []slotRange
	var nodes []ClusterNode
	for _, sh := range shards {
		p, ok := sh.Primary()
		if !ok || len(sh.Slots) == 0 {
			continue // a shard without a primary, or one serving no slot
		}
		primary := ClusterNode{ID: p.ID, Addr: p.Addr}
		for _, n := range sh.Nodes {
			if n.Role != "master" && (n.Health == "online" || n.Health == "") {
				primary.Replicas = append(primary.Replicas, n.Addr)
			}
		}
		for _, r := range sh.Slots {
			ranges = append(ranges, slotRange{r.Start, r.End, len(nodes)})
		}
		nodes = append(nodes, primary)
	}
	return newTopology(nodes, ranges)
}

// newTopology fills the slot table and orders the primaries by their
// first slot, so node 0 is the one serving slot 0.
func newTopology(nodes []ClusterNode, ranges []slotRange) (*clusterTopology, error) {
	if len(nodes) == 0 {
		return nil, fmt.Errorf("--cluster: the cluster has no primary serving slots (is it set up? CLUSTER ADDSLOTS and MEET, or redis-cli --cluster create)")
	}
	first := make([]int, len(nodes))
	for i := range first {
		first[i] = ClusterSlots
	}
	for _, r := range ranges {
		first[r.node] = min(first[r.node], r.start)
	}
	order := make([]int, len(nodes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return first[a] - first[b] })
	rank := make([]int, len(nodes))
	t := &clusterTopology{}
	for newIdx, old := range order {
		rank[old] = newIdx
		t.nodes = append(t.nodes, nodes[old])
	}
	for i := range t.slots {
		t.slots[i] = noOwner
	}
	for _, r := range ranges {
		if r.start < 0 || r.end >= ClusterSlots || r.start > r.end {
			return nil, fmt.Errorf("--cluster: bad slot range %d-%d in the topology", r.start, r.end)
		}
		for s := r.start; s <= r.end; s++ {
			t.slots[s] = uint16(rank[r.node])
		}
		t.nodes[rank[r.node]].Slots += r.end - r.start + 1
	}
	return t, nil
}

// commandKeys is where a command's keys are, from COMMAND INFO: the first
// key's argument index (0: none), the last (-1: the last argument) and
// the step between them; movable when only the arguments tell.
type commandKeys struct {
	first, last, step int
	movable, readonly bool
}

// multi reports whether a request can name more than one key.
func (k commandKeys) multi() bool { return k.first > 0 && k.last != k.first }

// fetchCommandKeys runs COMMAND INFO for each name over one connection.
func fetchCommandKeys(ctx context.Context, c *redisadmin.Conn, names []string) (map[string]commandKeys, error) {
	out := map[string]commandKeys{}
	for _, name := range names {
		name = strings.ToLower(name)
		if _, ok := out[name]; ok {
			continue
		}
		v, err := c.Do(ctx, "COMMAND", "INFO", name)
		if err != nil {
			return nil, fmt.Errorf("--cluster: COMMAND INFO %s: %w (give the key's position with --key-index)", name, err)
		}
		k, ok := parseCommandKeys(v)
		if !ok {
			return nil, fmt.Errorf("--cluster: the server does not know the command %q (give the key's position with --key-index)", name)
		}
		out[name] = k
	}
	return out, nil
}

// parseCommandKeys reads one COMMAND INFO entry: [name, arity, flags,
// first key, last key, step, ...].
func parseCommandKeys(v resp.Value) (commandKeys, bool) {
	if len(v.Elems) != 1 || len(v.Elems[0].Elems) < 6 {
		return commandKeys{}, false
	}
	e := v.Elems[0].Elems
	var k commandKeys
	k.first, _ = strconv.Atoi(e[3].Str)
	k.last, _ = strconv.Atoi(e[4].Str)
	k.step, _ = strconv.Atoi(e[5].Str)
	for _, f := range e[2].Elems {
		switch f.Str {
		case "movablekeys":
			k.movable = true
		case "readonly":
			k.readonly = true
		}
	}
	return k, true
}

// AdminOptions is how a control connection reaches addr with o's network,
// credentials and TLS (a workload's SCRIPT LOAD, its preload checks).
func (o *Options) AdminOptions(addr string) redisadmin.Options { return o.adminOptions(addr) }
