package lab

import (
	"context"
	"fmt"

	"redline/internal/labdata"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/target/policy"
)

// A managed-cluster target is a Redis Cluster redline starts on loopback
// (redisserver.StartCluster): every node gets the same server settings,
// so a variant applies to all of them; the admin connection is the first
// primary's, and the doctor, given it as a seed, checks every node and the
// cluster (its findings name their node); tuned variants' Redis settings
// go to every node (nodes); the workloads run with --cluster;
// FLUSHALL and the server CPU cover every primary.

// isCluster reports whether the workloads must run with --cluster.
func (t *target) isCluster() bool { return t.kind == labdata.KindManagedCluster || t.seedIsCluster }

// ensureCluster starts the cluster with spec on every node.
func (t *target) ensureCluster(ctx context.Context, spec labdata.ServerSpec, o redisserver.Options) error {
	c, err := policy.StartCluster(ctx, redisserver.ClusterOptions{Primaries: t.primaries, Replicas: t.replicas, Server: o}, serverSpec(spec))
	if err != nil {
		return fmt.Errorf("target kind managed-cluster: %w", err)
	}
	t.cluster, t.spec, t.running, t.addr = c, spec, true, c.Seed()
	t.server = c.Primaries[0]
	return t.connect(ctx)
}

// flushCluster empties every primary (replicas follow).
func (t *target) flushCluster(ctx context.Context) error {
	return t.eachPrimary(ctx, func(c *redisadmin.Conn) error {
		_, err := c.Do(ctx, "FLUSHALL")
		return err
	})
}

// clusterCPUSeconds sums used_cpu_sys + used_cpu_user over every node.
func (t *target) clusterCPUSeconds(ctx context.Context) (float64, error) {
	var sum float64
	for _, s := range t.cluster.Nodes() {
		c, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: s.Addr(), Username: t.user, Password: t.pass})
		if err != nil {
			return 0, err
		}
		info, err := c.Info(ctx, "cpu")
		c.Close()
		if err != nil {
			return 0, err
		}
		sum += info.CPUSeconds()
	}
	return sum, nil
}

func (t *target) eachPrimary(ctx context.Context, f func(*redisadmin.Conn) error) error {
	for _, s := range t.cluster.Primaries {
		c, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: s.Addr(), Username: t.user, Password: t.pass})
		if err != nil {
			return err
		}
		err = f(c)
		c.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", s.Addr(), err)
		}
	}
	return nil
}

// stopCluster stops every node.
func (t *target) stopCluster() error {
	c := t.cluster
	t.cluster, t.server = nil, nil
	return c.Stop()
}

// nodes lists every node of a cluster target, primaries and replicas, so
// a tuned variant's Redis settings go to each (tune.Plan.ForNodes); nil
// for a single server. An address seed's nodes come from its topology
// (CLUSTER SHARDS), failed ones included: tune then refuses to change the
// others rather than leave the cluster half-tuned.
func (t *target) nodes(ctx context.Context) ([]string, error) {
	var out []string
	switch {
	case t.cluster != nil:
		for _, s := range t.cluster.Nodes() {
			out = append(out, s.Addr())
		}
	case t.seedIsCluster && t.admin != nil:
		shards, err := t.admin.ClusterShards(ctx)
		if err != nil {
			return nil, err
		}
		out = redisadmin.NodeAddrs(shards)
	}
	return out, nil
}
