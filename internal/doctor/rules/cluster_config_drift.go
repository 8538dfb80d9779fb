package rules

import (
	"fmt"
	"slices"
	"strings"

	"redline/internal/change"
	"redline/internal/doctor"
)

// clusterConfigParams are the settings every node of a cluster should
// share because they change its speed, its memory or how it fails over
// (docs/doctor.md lists them). A replica promoted by a failover serves
// with its own settings, so replicas are compared with primaries too.
var clusterConfigParams = []string{
	"maxmemory", "maxmemory-policy", "maxmemory-samples", "maxclients", "timeout", "tcp-keepalive", "tcp-backlog",
	"hz", "dynamic-hz", "io-threads", "io-threads-do-reads", "disable-thp",
	"activedefrag", "active-defrag-cycle-min", "active-defrag-cycle-max",
	"lazyfree-lazy-eviction", "lazyfree-lazy-expire", "lazyfree-lazy-server-del", "lazyfree-lazy-user-del", "lazyfree-lazy-user-flush", "replica-lazy-flush",
	"cluster-node-timeout", "cluster-require-full-coverage", "cluster-allow-reads-when-down", "cluster-allow-replica-migration", "cluster-migration-barrier",
	"repl-backlog-size", "client-output-buffer-limit",
	"hash-max-listpack-entries", "zset-max-listpack-entries", "set-max-intset-entries", "list-max-listpack-size",
}

// clusterPersistenceParams are compared among nodes of the same role only:
// persisting on replicas alone is a common, deliberate layout.
var clusterPersistenceParams = []string{"appendonly", "appendfsync", "save", "no-appendfsync-on-rewrite"}

func init() {
	doctor.Register(doctor.Rule{
		ID: "cluster-config-drift", Section: "cluster", Severity: doctor.Medium,
		Title:  "A node's performance settings differ from the other nodes'",
		Why:    "a cluster is as fast as its slowest shard: one node with another maxmemory, eviction policy, hz, io-threads or fsync policy behaves differently under the same load, and a replica promoted by failover brings its own settings",
		Source: "RS-conf (each setting's effect); RD-cluster (failover promotes a replica as it is)",
		Needs:  doctor.NeedCluster,
		Proves: []string{"CONFIG GET *"},
		Check:  checkConfigDrift,
	})
}

func checkConfigDrift(f *doctor.Facts) doctor.Result {
	c := f.Cluster
	var read []*doctor.ClusterNodeFacts
	for _, n := range c.Nodes {
		if n.Redis != nil && n.Redis.Config != nil {
			read = append(read, n)
		}
	}
	if len(read) < 2 {
		return doctor.Unchecked("CONFIG GET was read from %d node(s): nothing to compare", len(read))
	}
	var problems []string
	var ev []doctor.Evidence
	var advice []string
	compare := func(param string, nodes []*doctor.ClusterNodeFacts, among string) {
		d := configDiff(param, nodes)
		if d == nil {
			return
		}
		if len(d.odd) == 0 {
			ev = append(ev, doctor.Evidence{Source: "CONFIG GET " + param, Value: d.common, Note: fmt.Sprintf("on %d %s", d.n, among)})
			return
		}
		for _, n := range d.odd {
			v, _ := n.Redis.Config.Get(param)
			problems = append(problems, fmt.Sprintf("%s %s = %q (%d other %s: %q)", n.Addr, param, v, d.n-len(d.odd), among, d.common))
			ev = append(ev, doctor.Evidence{Source: "CONFIG GET " + param + " on " + n.Label(), Value: v, Note: fmt.Sprintf("the other %s: %s", among, d.common)})
			advice = append(advice, doctor.Command(change.Change{Kind: change.KindRedisConfig, Target: param, Value: d.common}, n.Addr))
		}
	}
	for _, p := range clusterConfigParams {
		compare(p, read, "nodes")
	}
	for _, role := range [][2]string{{"primary", "primaries"}, {"replica", "replicas"}} {
		same := slices.DeleteFunc(slices.Clone(read), func(n *doctor.ClusterNodeFacts) bool { return n.Role != role[0] })
		for _, p := range clusterPersistenceParams {
			compare(p, same, role[1])
		}
	}
	res := doctor.Pass("%d nodes share the %d compared settings", len(read), len(clusterConfigParams)+len(clusterPersistenceParams))
	if len(problems) > 0 {
		advice = append(advice, "or make the common value the odd one if that node is the one set right; CONFIG REWRITE on each node keeps it across restarts")
		res = doctor.Fire("%s", strings.Join(problems, "; ")).WithFix(&doctor.Fix{Advice: advice})
	}
	if down := c.Unreachable(); len(down) > 0 {
		res = res.Note("not compared: %s (could not be reached)", strings.Join(down, ", "))
	}
	return res.With(ev...)
}

type paramDiff struct {
	common string // the value most nodes have (the first seen on a tie)
	n      int    // nodes that have the parameter
	odd    []*doctor.ClusterNodeFacts
}

// configDiff compares param over nodes; nil when fewer than two have it.
func configDiff(param string, nodes []*doctor.ClusterNodeFacts) *paramDiff {
	count := map[string]int{}
	var order []string
	d := &paramDiff{}
	for _, n := range nodes {
		v, ok := n.Redis.Config.Get(param)
		if !ok {
			continue
		}
		if count[v] == 0 {
			order = append(order, v)
		}
		count[v]++
		d.n++
	}
	if d.n < 2 {
		return nil
	}
	for _, v := range order {
		if count[v] > count[d.common] {
			d.common = v
		}
	}
	for _, n := range nodes {
		if v, ok := n.Redis.Config.Get(param); ok && v != d.common {
			d.odd = append(d.odd, n)
		}
	}
	return d
}
