package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
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

// fetchTopology asks addr for the cluster's shards: CLUSTER SHARDS
// (Redis 7), or CLUSTER SLOTS on older servers.
func fetchTopology(ctx context.Context, o *Options, addr string) (*clusterTopology, error) {
	c, err := redisadmin.Dial(ctx, o.adminOptions(addr))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	v, err := c.Do(ctx, "CLUSTER", "SHARDS")
	if err == nil {
		return parseClusterShards(v)
	}
	var se *resp.ServerError
	if !errors.As(err, &se) {
		return nil, fmt.Errorf("cluster topology from %s: %w", addr, err)
	}
	if strings.Contains(se.Msg, "cluster support disabled") {
		return nil, fmt.Errorf("--cluster: %s is not in cluster mode (%s); drop --cluster to benchmark it as one server", addr, se.Msg)
	}
	v, err = c.Do(ctx, "CLUSTER", "SLOTS")
	if err != nil {
		return nil, fmt.Errorf("cluster topology from %s: %w", addr, err)
	}
	return parseClusterSlots(v)
}

// slotRange is slots start..end (inclusive) served by nodes[node].
type slotRange struct{ start, end, node int }

// parseClusterShards reads CLUSTER SHARDS: per shard a map with "slots"
// (start, end pairs) and "nodes" (maps with id, ip, port, role, health).
func parseClusterShards(v resp.Value) (*clusterTopology, error) {
	var ranges []slotRange
	var nodes []ClusterNode
	for _, sh := range v.Elems {
		m := pairs(sh)
		slots := m["slots"].Elems
		var primary ClusterNode
		for _, nv := range m["nodes"].Elems {
			n := pairs(nv)
			addr := net.JoinHostPort(cmp.Or(n["ip"].Str, n["endpoint"].Str), cmp.Or(n["port"].Str, n["tls-port"].Str))
			switch {
			case n["role"].Str == "master":
				primary.ID, primary.Addr = n["id"].Str, addr
			case n["health"].Str == "online":
				primary.Replicas = append(primary.Replicas, addr)
			}
		}
		if primary.Addr == "" || len(slots) == 0 {
			continue // a shard without a primary, or one serving no slot
		}
		for i := 0; i+1 < len(slots); i += 2 {
			a, _ := strconv.Atoi(slots[i].Str)
			b, _ := strconv.Atoi(slots[i+1].Str)
			ranges = append(ranges, slotRange{a, b, len(nodes)})
		}
		nodes = append(nodes, primary)
	}
	return newTopology(nodes, ranges)
}

// parseClusterSlots reads CLUSTER SLOTS: per range [start, end, primary,
// replicas...], each node [ip, port, id, ...].
func parseClusterSlots(v resp.Value) (*clusterTopology, error) {
	var ranges []slotRange
	var nodes []ClusterNode
	for _, r := range v.Elems {
		if len(r.Elems) < 3 || len(r.Elems[2].Elems) < 2 {
			continue
		}
		a, _ := strconv.Atoi(r.Elems[0].Str)
		b, _ := strconv.Atoi(r.Elems[1].Str)
		p := r.Elems[2].Elems
		addr := net.JoinHostPort(p[0].Str, p[1].Str)
		i := slices.IndexFunc(nodes, func(n ClusterNode) bool { return n.Addr == addr })
		if i < 0 {
			i = len(nodes)
			n := ClusterNode{Addr: addr}
			if len(p) > 2 {
				n.ID = p[2].Str
			}
			for _, rep := range r.Elems[3:] {
				if len(rep.Elems) >= 2 {
					n.Replicas = append(n.Replicas, net.JoinHostPort(rep.Elems[0].Str, rep.Elems[1].Str))
				}
			}
			nodes = append(nodes, n)
		}
		ranges = append(ranges, slotRange{a, b, i})
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

// pairs reads a flat key/value array (RESP2) or a map (RESP3).
func pairs(v resp.Value) map[string]resp.Value {
	m := make(map[string]resp.Value, len(v.Elems)/2)
	for i := 0; i+1 < len(v.Elems); i += 2 {
		m[v.Elems[i].Str] = v.Elems[i+1]
	}
	return m
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
