package cli

// A Redis Cluster as redline autotune's target (--cluster), the two kinds
// the lab has: an existing cluster reached through one node (--addr, the
// lab's address target with cluster: true) and one started here
// (--primaries, --replicas: the lab's managed-cluster, started by
// redisserver.StartCluster on loopback). Its nodes are listed once, at
// the start, by the host's RedisNodes (tune.ClusterNodes: CLUSTER SHARDS
// of the seed, the walker tune and the lab use); a trial's Redis settings
// go to every one of them (tune.Plan.ForNodes, as the lab's variants: in
// one scoped apply through the host's journal, every node or none, rolled
// back after the measurement), its host settings once (the nodes run on
// this host); the load runs in bench's cluster mode against the seed.

import (
	"github.com/spf13/cobra"

	"redline/internal/redisparam"
)

func (o *autotuneOptions) clusterFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.target.Cluster, "cluster", false, "a Redis Cluster: with --addr an existing one (any node), else one started here (--primaries, --replicas); the load runs in bench's cluster mode")
	f.IntVar(&o.target.Primaries, "primaries", 0, "with --cluster and no --addr: the primaries of the cluster started here (default 3)")
	f.IntVar(&o.target.Replicas, "replicas", 0, "with --cluster and no --addr: the replicas of each primary")
	f.BoolVar(&o.clusterAuthAny, "cluster-auth-any", false, "with --cluster --addr: send the password to every node the seed lists, not only to those on its host or network")
}

// finishCluster checks the cluster flags.
func (o *autotuneOptions) finishCluster() error {
	t := &o.target
	bad := func(format string, args ...any) error {
		return usageError("redline autotune: "+format, args...)
	}
	sized := t.Primaries != 0 || t.Replicas != 0
	switch {
	case !t.Cluster && sized:
		return bad("--primaries and --replicas size a cluster autotune starts (--cluster without --addr)")
	case !t.Cluster:
		return nil
	case t.Socket != "":
		return bad("--cluster needs a TCP seed (--addr HOST:PORT), not --socket: bench's cluster mode reaches the nodes by address")
	case t.SSH != "":
		return bad("--cluster with --ssh is not supported yet: the cluster's nodes must run on this host")
	case t.NetNS:
		return bad("--cluster with --netns is not supported yet")
	case t.Addr != "" && sized:
		return bad("--primaries and --replicas size a cluster autotune starts: an existing one (--addr) has its own")
	case t.Primaries < 0 || t.Replicas < 0:
		return bad("--primaries and --replicas: not negative")
	}
	if t.Addr == "" && t.Primaries == 0 {
		t.Primaries = 3 // the lab's managed-cluster default
	}
	for _, line := range t.ServerConfig { // every node's: no cluster-* or port override
		if err := redisparam.CheckLine(line); err != nil {
			return bad("--server-config: %v", err)
		}
	}
	return nil
}
