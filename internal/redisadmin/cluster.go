package redisadmin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"redline/internal/resp"
)

// ClusterSlots is the number of hash slots of a Redis Cluster.
const ClusterSlots = 16384

// ErrNotCluster marks a server that answered a CLUSTER command with
// "cluster support disabled": it is not in cluster mode.
var ErrNotCluster = errors.New("not in cluster mode")

// ClusterShard is one shard of a cluster as a node sees it: the slot
// ranges it serves and its nodes, the primary first.
type ClusterShard struct {
	Slots []SlotRange
	Nodes []ClusterMember
}

// SlotRange is slots Start..End, inclusive.
type SlotRange struct{ Start, End int }

// Len is the number of slots in r.
func (r SlotRange) Len() int { return r.End - r.Start + 1 }

// String is "5461-10922", or "7" for one slot.
func (r SlotRange) String() string {
	if r.Start == r.End {
		return strconv.Itoa(r.Start)
	}
	return fmt.Sprintf("%d-%d", r.Start, r.End)
}

// ClusterMember is one node of a shard.
type ClusterMember struct {
	ID   string
	Addr string // host:port the node advertises
	// Role is "master" or "replica".
	Role string
	// Health is CLUSTER SHARDS' "online", "fail" or "loading" (cluster.c,
	// addNodeDetailsToShardReply; the Redis docs print "failed"); empty
	// when the topology came from CLUSTER SLOTS, which lists no failed
	// replica.
	Health string
}

// Failed reports whether CLUSTER SHARDS calls the node failed: "fail" as
// the server sends it, or "failed" as the Redis docs print it.
func (m ClusterMember) Failed() bool { return m.Health == "fail" || m.Health == "failed" }

// Working reports whether the node serves now: CLUSTER SHARDS says
// "online", or the topology came from CLUSTER SLOTS, which leaves failed
// replicas out. A loading node is neither working nor Failed: it will
// serve once its data is loaded, but cannot take over a failed primary's
// slots now.
func (m ClusterMember) Working() bool { return m.Health == "online" || m.Health == "" }

// Primary returns the shard's primary, or false when it has none.
func (s ClusterShard) Primary() (ClusterMember, bool) {
	for _, n := range s.Nodes {
		if n.Role == "master" {
			return n, true
		}
	}
	return ClusterMember{}, false
}

// SlotCount is how many slots the shard serves.
func (s ClusterShard) SlotCount() int {
	n := 0
	for _, r := range s.Slots {
		n += r.Len()
	}
	return n
}

// ClusterShards reads the cluster's shards as this node sees them:
// CLUSTER SHARDS (Redis 7), or CLUSTER SLOTS on older servers. A server
// not in cluster mode gives an error wrapping ErrNotCluster.
func (c *Conn) ClusterShards(ctx context.Context) ([]ClusterShard, error) {
	v, err := c.do(ctx, "CLUSTER", "SHARDS")
	if err == nil {
		return c.withHost(ParseClusterShards(v)), nil
	}
	var se *resp.ServerError
	if !errors.As(err, &se) {
		return nil, fmt.Errorf("cluster topology from %s: %w", c.Addr(), err)
	}
	if strings.Contains(se.Msg, "cluster support disabled") {
		return nil, fmt.Errorf("%s is %w (%s)", c.Addr(), ErrNotCluster, se.Msg)
	}
	if v, err = c.do(ctx, "CLUSTER", "SLOTS"); err != nil {
		return nil, fmt.Errorf("cluster topology from %s: %w", c.Addr(), err)
	}
	return c.withHost(ParseClusterSlots(v)), nil
}

// withHost gives the host this connection dialled to members announced
// without one (":7000", or "?:7000" for an unknown endpoint): a node that
// has met no other does not know its own address, and only its own entry
// can lack one (the others' come from the nodes that met them).
func (c *Conn) withHost(shards []ClusterShard) []ClusterShard {
	host, _, err := net.SplitHostPort(c.opts.Addr)
	if err != nil || c.opts.Network == "unix" {
		return shards
	}
	for i := range shards {
		for j := range shards[i].Nodes {
			m := &shards[i].Nodes[j]
			if h, port, err := net.SplitHostPort(m.Addr); err == nil && (h == "" || h == "?") {
				m.Addr = net.JoinHostPort(host, port)
			}
		}
	}
	return shards
}

// ParseClusterShards reads CLUSTER SHARDS: per shard a map with "slots"
// (start, end pairs) and "nodes" (maps with id, ip or endpoint, port or
// tls-port, role, health). Every node is kept, whatever its health.
func ParseClusterShards(v resp.Value) []ClusterShard {
	var out []ClusterShard
	for _, sh := range v.Elems {
		m := pairs(sh)
		var s ClusterShard
		slots := m["slots"].Elems
		for i := 0; i+1 < len(slots); i += 2 {
			a, _ := strconv.Atoi(slots[i].Str)
			b, _ := strconv.Atoi(slots[i+1].Str)
			s.Slots = append(s.Slots, SlotRange{a, b})
		}
		for _, nv := range m["nodes"].Elems {
			n := pairs(nv)
			addr := net.JoinHostPort(cmp.Or(n["ip"].Str, n["endpoint"].Str), cmp.Or(n["port"].Str, n["tls-port"].Str))
			s.Nodes = append(s.Nodes, ClusterMember{ID: n["id"].Str, Addr: addr, Role: n["role"].Str, Health: n["health"].Str})
		}
		slices.SortStableFunc(s.Nodes, func(a, b ClusterMember) int { return boolRank(a.Role != "master") - boolRank(b.Role != "master") })
		out = append(out, s)
	}
	return out
}

// ParseClusterSlots reads CLUSTER SLOTS: per range [start, end, primary,
// replicas...], each node [ip, port, id, ...]. Ranges of one primary make
// one shard.
func ParseClusterSlots(v resp.Value) []ClusterShard {
	var out []ClusterShard
	for _, r := range v.Elems {
		if len(r.Elems) < 3 || len(r.Elems[2].Elems) < 2 {
			continue
		}
		a, _ := strconv.Atoi(r.Elems[0].Str)
		b, _ := strconv.Atoi(r.Elems[1].Str)
		p := r.Elems[2].Elems
		addr := net.JoinHostPort(p[0].Str, p[1].Str)
		i := slices.IndexFunc(out, func(s ClusterShard) bool { return s.Nodes[0].Addr == addr })
		if i < 0 {
			i = len(out)
			s := ClusterShard{Nodes: []ClusterMember{{Addr: addr, Role: "master", ID: elemStr(p, 2)}}}
			for _, rep := range r.Elems[3:] {
				if len(rep.Elems) >= 2 {
					s.Nodes = append(s.Nodes, ClusterMember{Addr: net.JoinHostPort(rep.Elems[0].Str, rep.Elems[1].Str), Role: "replica", ID: elemStr(rep.Elems, 2)})
				}
			}
			out = append(out, s)
		}
		out[i].Slots = append(out[i].Slots, SlotRange{a, b})
	}
	return out
}

// ClusterNodeFlags reads CLUSTER NODES and returns each node's flags by
// node id ("master", "myself", "fail?", "fail", "handshake", "noaddr",
// "nofailover"): how this node sees the others' health.
func (c *Conn) ClusterNodeFlags(ctx context.Context) (map[string][]string, error) {
	v, err := c.do(ctx, "CLUSTER", "NODES")
	if err != nil {
		return nil, fmt.Errorf("CLUSTER NODES on %s: %w", c.Addr(), err)
	}
	return parseClusterNodeFlags(v.Str), nil
}

// parseClusterNodeFlags reads the flags field of CLUSTER NODES lines:
//
//	07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave,fail? e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
func parseClusterNodeFlags(text string) map[string][]string {
	out := map[string][]string{}
	for line := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		out[f[0]] = strings.Split(f[2], ",")
	}
	return out
}

// ClusterInfo runs CLUSTER INFO (cluster_state, cluster_slots_assigned,
// cluster_known_nodes ...), parsed as INFO is.
func (c *Conn) ClusterInfo(ctx context.Context) (*Info, error) {
	v, err := c.do(ctx, "CLUSTER", "INFO")
	if err != nil {
		return nil, fmt.Errorf("CLUSTER INFO on %s: %w", c.Addr(), err)
	}
	return ParseInfo(v.Str), nil
}

func elemStr(v []resp.Value, i int) string {
	if i < len(v) {
		return v[i].Str
	}
	return ""
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pairs reads a flat key/value array (RESP2) or a map (RESP3).
func pairs(v resp.Value) map[string]resp.Value {
	m := make(map[string]resp.Value, len(v.Elems)/2)
	for i := 0; i+1 < len(v.Elems); i += 2 {
		m[v.Elems[i].Str] = v.Elems[i+1]
	}
	return m
}

// NodeAddrs lists every node the shards name, primaries and replicas,
// whatever their health, in shard order: the servers a cluster-wide
// setting must reach.
func NodeAddrs(shards []ClusterShard) []string {
	var out []string
	for _, sh := range shards {
		for _, n := range sh.Nodes {
			out = append(out, n.Addr)
		}
	}
	return out
}
