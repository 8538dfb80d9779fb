package tune

import (
	"context"
	"fmt"

	"redline/internal/redisadmin"
	"redline/internal/resp"
)

// ClusterNodes lists the nodes of the Redis Cluster the server at o
// belongs to (primaries and replicas, from its CLUSTER SHARDS), so a
// plan's Redis settings can go to each (Plan.ForNodes). It is nil for a
// server not in cluster mode.
func ClusterNodes(ctx context.Context, o RedisOptions) ([]string, error) {
	c, err := redisadmin.Dial(ctx, redisadmin.Options{Network: o.Network, Addr: o.Addr, Username: o.User, Password: o.Password, Timeout: resp.DefaultTimeout})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	info, err := c.Info(ctx, "cluster")
	if err != nil {
		return nil, fmt.Errorf("Redis at %s: %w", o.Addr, err)
	}
	if v, _ := info.Get("cluster_enabled"); v != "1" {
		return nil, nil
	}
	shards, err := c.ClusterShards(ctx)
	if err != nil {
		return nil, err
	}
	return redisadmin.NodeAddrs(shards), nil
}
