package redisserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"redline/internal/resp"
)

// ClusterOptions says how to start a Redis Cluster of managed servers.
type ClusterOptions struct {
	Primaries int // at least 1; redis-benchmark --cluster wants 2 or more
	Replicas  int // replicas per primary
	// Server is the template for every node (binary, config lines, env,
	// wrap): a server variant applies to every node alike. Port and Dir
	// must be zero: each node gets its own.
	Server Options
	// ReadyTimeout bounds the wait for cluster_state:ok on every node;
	// default 30s.
	ReadyTimeout time.Duration
}

// Cluster is a running Redis Cluster on free ports.
type Cluster struct {
	Primaries []*Server
	Replicas  []*Server // Replicas[i] replicates Primaries[i/Replicas-per-primary]
}

// Nodes returns every node, primaries first.
func (c *Cluster) Nodes() []*Server {
	return append(append([]*Server{}, c.Primaries...), c.Replicas...)
}

// Seed returns the address of the first primary, a seed for clients.
func (c *Cluster) Seed() string { return c.Primaries[0].Addr() }

// StartCluster starts the nodes with cluster-enabled, gives each primary
// an equal share of the 16384 slots (CLUSTER ADDSLOTSRANGE), joins them
// (CLUSTER MEET), attaches the replicas (CLUSTER REPLICATE) and waits until
// every node reports cluster_state:ok and sees every slot served. On
// failure every node started is stopped.
func StartCluster(ctx context.Context, o ClusterOptions) (*Cluster, error) {
	if o.Primaries < 1 || o.Replicas < 0 {
		return nil, fmt.Errorf("a cluster needs at least 1 primary and no negative replica count, got %d and %d", o.Primaries, o.Replicas)
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 30 * time.Second
	}
	c := &Cluster{}
	err := c.start(ctx, o)
	if err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, o ClusterOptions) error {
	so := o.Server
	so.Config = append(append([]string{}, so.Config...),
		"cluster-enabled yes", "cluster-config-file nodes.conf", "cluster-node-timeout 5000",
		"cluster-require-full-coverage yes",
		// A replica whose offset is still 0 shows as "loading" and is left
		// out of CLUSTER SLOTS; a ping a second moves it on an idle cluster.
		"repl-ping-replica-period 1")
	for i := range o.Primaries * (1 + o.Replicas) {
		s, err := Start(ctx, so)
		if err != nil {
			return fmt.Errorf("cluster node %d: %w", i+1, err)
		}
		if i < o.Primaries {
			c.Primaries = append(c.Primaries, s)
		} else {
			c.Replicas = append(c.Replicas, s)
		}
	}
	if err := c.assignSlots(ctx); err != nil {
		return err
	}
	if err := c.meet(ctx); err != nil {
		return err
	}
	if err := c.replicate(ctx, o.Replicas, o.ReadyTimeout); err != nil {
		return err
	}
	return c.waitReady(ctx, o.ReadyTimeout)
}

// do runs one command on s.
func do(ctx context.Context, s *Server, args ...string) (resp.Value, error) {
	cl, err := s.Client(ctx)
	if err != nil {
		return resp.Value{}, err
	}
	defer cl.Close()
	v, err := cl.DoOK(ctx, args...)
	if err != nil {
		return v, fmt.Errorf("%s on %s: %w", strings.Join(args[:min(2, len(args))], " "), s.Addr(), err)
	}
	return v, nil
}

func (c *Cluster) assignSlots(ctx context.Context) error {
	n := len(c.Primaries)
	for i, s := range c.Primaries {
		lo, hi := i*16384/n, (i+1)*16384/n-1
		if _, err := do(ctx, s, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) meet(ctx context.Context) error {
	first := c.Primaries[0]
	for _, s := range c.Nodes()[1:] {
		if _, err := do(ctx, first, "CLUSTER", "MEET", s.Host, strconv.Itoa(s.Port)); err != nil {
			return err
		}
	}
	return nil
}

// NodeID returns s's cluster node id.
func NodeID(ctx context.Context, s *Server) (string, error) {
	v, err := do(ctx, s, "CLUSTER", "MYID")
	return v.Str, err
}

// replicate makes each replica follow its primary, once it knows it.
func (c *Cluster) replicate(ctx context.Context, per int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for i, r := range c.Replicas {
		id, err := NodeID(ctx, c.Primaries[i/per])
		if err != nil {
			return err
		}
		for {
			_, err = do(ctx, r, "CLUSTER", "REPLICATE", id)
			if err == nil {
				break
			}
			// "Unknown node": the gossip has not reached it yet.
			if !strings.Contains(err.Error(), "Unknown node") || time.Now().After(deadline) {
				return err
			}
			if err := sleep(ctx, 20*time.Millisecond); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitReady waits until every node says cluster_state:ok and knows every
// node; replicas must also have finished their first sync.
func (c *Cluster) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		ok, why := c.ready(ctx)
		if ok {
			return nil
		}
		last = why
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not ready within %s: %s", timeout, last)
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
}

func (c *Cluster) ready(ctx context.Context) (bool, string) {
	all := c.Nodes()
	for _, s := range all {
		v, err := do(ctx, s, "CLUSTER", "INFO")
		if err != nil {
			return false, err.Error()
		}
		if !strings.Contains(v.Str, "cluster_state:ok") || !strings.Contains(v.Str, "cluster_known_nodes:"+strconv.Itoa(len(all))+"\r") {
			return false, s.Addr() + " reports: " + firstLines(v.Str, 3)
		}
	}
	for _, r := range c.Replicas {
		v, err := do(ctx, r, "INFO", "replication")
		if err != nil {
			return false, err.Error()
		}
		if !strings.Contains(v.Str, "master_link_status:up") {
			return false, "replica " + r.Addr() + " not in sync yet"
		}
	}
	// Every primary must see every node online, or a client may route by
	// a partial view.
	for _, p := range c.Primaries {
		v, err := do(ctx, p, "CLUSTER", "SHARDS")
		if err != nil {
			return false, err.Error()
		}
		if n := countStr(v, "online"); n < len(all) {
			return false, fmt.Sprintf("%s sees %d of %d nodes online", p.Addr(), n, len(all))
		}
	}
	return true, ""
}

func countStr(v resp.Value, s string) int {
	n := 0
	if v.Str == s {
		n++
	}
	for _, e := range v.Elems {
		n += countStr(e, s)
	}
	return n
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[:min(n, len(lines))], "; ")
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Stop stops every node and returns the first error.
func (c *Cluster) Stop() error {
	var errs []error
	for _, s := range c.Nodes() {
		errs = append(errs, s.Stop())
	}
	return errors.Join(errs...)
}
