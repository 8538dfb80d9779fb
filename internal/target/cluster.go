package target

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
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"redline/internal/knobs"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/serverhost"
	"redline/internal/target/policy"
)

// clusterNodes is a cluster target's nodes.
type clusterNodes struct {
	// started is the cluster autotune started (stopped at the end); nil
	// for an existing one.
	started *redisserver.Cluster
	// nodes are every node, primaries and replicas (redisadmin.NodeAddrs),
	// each with an admin connection (CONFIG GET of the value found).
	nodes  []string
	admins map[string]*redisadmin.Conn
	// primaries and replicas size a managed cluster (and the clusters
	// its start-up trials run on).
	primaries, replicas int
	// authAny sends the seed's password to every node it lists
	// (--cluster-auth-any), not only to those redisadmin.NodeGetsPassword
	// accepts.
	authAny bool
}

// openCluster starts the managed cluster or takes the existing one's
// seed, lists the nodes, attaches each (host knobs need every node to be
// a process of this host) and decides the guard over the redis-servers
// that are not the cluster's.
func (t *Target) openCluster(ctx context.Context, o Options) error {
	tg := o.Spec
	others := policy.OtherServers("/") // before a managed cluster starts
	c := &clusterNodes{admins: map[string]*redisadmin.Conn{}, primaries: tg.Primaries, replicas: tg.Replicas, authAny: o.ClusterAuthAny}
	t.cluster = c
	seed := &serverhost.RedisTarget{Addr: tg.Addr, User: tg.User, Password: o.Password}
	if tg.Addr == "" {
		started, err := c.start(ctx, t.start)
		if err != nil {
			return fmt.Errorf("--cluster: %w", err)
		}
		c.started, seed.Addr = started, started.Seed()
	}
	if _, err := t.attachServer(ctx, seed); err != nil {
		return err
	}
	t.base().cluster = c
	pids, err := c.listNodes(ctx, t, seed)
	if err != nil {
		return err
	}
	// The cluster's nodes are not among the others the guard protects.
	others = slices.DeleteFunc(others, func(o string) bool { return slices.Contains(pids, o) })
	t.guard(others, tg.AllowHostWide)
	t.where = c.describe(tg, seed.Addr)
	if c.started != nil {
		return t.resolveCPUs(ctx) // server.cpus of the nodes
	}
	return nil
}

// start starts a cluster of c's size with the start-up spec a on every
// node (the binary of a --build, the config lines, the allocator
// preloaded and checked on each, the CPU set), as redisserver.StartCluster
// does for the lab.
func (c *clusterNodes) start(ctx context.Context, a serverhost.RedisStartArgs) (*redisserver.Cluster, error) {
	spec := redisserver.Spec{Binary: a.Binary, Config: policy.StartConfig(a.Config), Allocator: a.Allocator, CPUs: a.CPUs, NUMANode: a.NUMANode}
	so, err := redisserver.SpecOptions(spec)
	if err != nil {
		return nil, err
	}
	return policy.StartCluster(ctx, redisserver.ClusterOptions{Primaries: c.primaries, Replicas: c.replicas, Server: so}, spec)
}

// listNodes lists the cluster's nodes through the host (RedisNodes) and
// attaches each; pids are theirs, as the guard names servers.
func (c *clusterNodes) listNodes(ctx context.Context, t *Target, seed *serverhost.RedisTarget) (pids []string, err error) {
	if c.nodes, err = t.host.RedisNodes(ctx, *seed); err != nil {
		return nil, fmt.Errorf("--cluster: the nodes of %s: %w", seed.Addr, err)
	}
	if len(c.nodes) == 0 {
		return nil, fmt.Errorf("--cluster: %s is %w", seed.Addr, redisadmin.ErrNotCluster)
	}
	for _, n := range c.nodes {
		pid, err := c.attach(ctx, t, n, seed)
		if err != nil {
			return nil, err
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// trialCluster starts the pool's server for start-up spec a on a managed
// cluster: a cluster of its own, beside the baseline's (as a single
// server's start-up trial runs beside the baseline's).
func (t *Target) trialCluster(ctx context.Context, a serverhost.RedisStartArgs, key string) (*trialServer, error) {
	base := t.cluster
	c := &clusterNodes{admins: map[string]*redisadmin.Conn{}, primaries: base.primaries, replicas: base.replicas}
	started, err := c.start(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("start a cluster (%s): %w", key, err)
	}
	c.started = started
	seed := &serverhost.RedisTarget{Addr: started.Seed()}
	if _, err := c.listNodes(ctx, t, seed); err != nil {
		c.close()
		return nil, err
	}
	return &trialServer{key: key, addr: seed.Addr, pid: started.Primaries[0].Pid(), redis: seed, admin: c.admins[seed.Addr], cluster: c}, nil
}

// attach dials node n and checks it is a process of the server host; a
// node that is not leaves the host knobs out (t.noHost), naming it.
func (c *clusterNodes) attach(ctx context.Context, t *Target, n string, seed *serverhost.RedisTarget) (pid string, err error) {
	r := serverhost.RedisTarget{Addr: n, User: seed.User, Password: seed.Password}
	if r.Password != "" {
		if err := redisadmin.NodeGetsPassword(seed.Addr, n, c.authAny); err != nil {
			return "", fmt.Errorf("--cluster: node %s: %w", n, err)
		}
	}
	a, aerr := t.host.RedisAttach(ctx, r)
	if aerr != nil && t.noHost == "" {
		t.noHost = fmt.Sprintf("cluster node %s is not a process of the server host (%v)", n, aerr)
	}
	admin, err := redisadmin.Dial(ctx, redisadmin.Options{Addr: n, Username: r.User, Password: r.Password})
	if err != nil {
		return "", fmt.Errorf("--cluster: node %s: %w", n, err)
	}
	c.admins[n] = admin
	if aerr != nil {
		return "", nil
	}
	return "pid " + strconv.Itoa(a.Pid), nil
}

func (c *clusterNodes) describe(tg Spec, seed string) string {
	if c.started != nil {
		return fmt.Sprintf("a managed Redis Cluster here, %d primaries with %d replicas each (%d nodes, seed %s)", tg.Primaries, tg.Replicas, len(c.nodes), seed)
	}
	return fmt.Sprintf("the existing Redis Cluster at %s (%d nodes: %s)", seed, len(c.nodes), strings.Join(c.nodes, " "))
}

// close closes the nodes' connections and stops a managed cluster: after
// the host's close, whose rollback needs the nodes.
func (c *clusterNodes) close() {
	for _, a := range c.admins {
		a.Close()
	}
	if c.started != nil {
		c.started.Stop()
	}
}

// clusterNodes are the baseline cluster's nodes: nil for a single
// server.
func (t *Target) clusterNodes() []string { return t.cluster.nodeList() }

// nodeList is c's nodes, nil for no cluster.
func (c *clusterNodes) nodeList() []string {
	if c == nil {
		return nil
	}
	return c.nodes
}

// configNow is the value every node has, ok false when one cannot be
// read or they differ (then no value is the target's already).
func (c *clusterNodes) configNow(ctx context.Context, name string) (string, bool) {
	var val string
	for i, n := range c.nodes {
		cfg, err := c.admins[n].ConfigGet(ctx, name)
		cur, found := cfg[name]
		if err != nil || !found || i > 0 && cur != val {
			return "", false
		}
		val = cur
	}
	return val, true
}

// cannotOnCluster says why k is not tried on a cluster ("" when it is, or
// the target is one server): start-up settings on an existing cluster
// (autotune starts a cluster of its own for them on a managed one);
// steer and numa-bind follow one server's threads, and a cluster's nodes
// are several processes.
func (t *Target) cannotOnCluster(k knobs.Knob) string {
	if t.cluster == nil {
		return ""
	}
	switch name, _ := k.Profile(); {
	case k.Method() == knobs.ByServerSpec && t.cluster.started == nil:
		return "needs a server restart: autotune restarts only servers it started (an existing cluster keeps its nodes' settings)"
	case k.Method() == knobs.BySteer, name == "numa-bind":
		return "follows one server's threads: a cluster's nodes are several processes (not tried on a cluster yet)"
	}
	return ""
}

// flushCluster empties a managed cluster's primaries (replicas follow)
// before a measurement; an existing cluster holds someone's data: never.
func (c *clusterNodes) flush(ctx context.Context) error {
	if c.started == nil {
		return nil
	}
	var errs []error
	for _, p := range c.started.Primaries {
		a := c.admins[p.Addr()]
		if a == nil {
			return fmt.Errorf("FLUSHALL: primary %s is not among the nodes %s lists", p.Addr(), c.started.Seed())
		}
		if _, err := a.Do(ctx, "FLUSHALL"); err != nil {
			errs = append(errs, fmt.Errorf("FLUSHALL on %s: %w", p.Addr(), err))
		}
	}
	return errors.Join(errs...)
}

// restarts says whether start-up knobs can be tried: on a server or a
// cluster autotune started.
func (t *Target) restarts() bool {
	return t.managed || t.cluster != nil && t.cluster.started != nil
}

// commandStats is srv's INFO commandstats; a cluster's summed over its
// nodes (the load's commands spread over them).
func commandStats(ctx context.Context, srv *trialServer) ([]redisadmin.CommandStat, error) {
	conns := []*redisadmin.Conn{srv.admin}
	if c := srv.cluster; c != nil {
		conns = conns[:0]
		for _, n := range c.nodes {
			conns = append(conns, c.admins[n])
		}
	}
	var order []string
	sum := map[string]redisadmin.CommandStat{}
	for _, a := range conns {
		info, err := a.Info(ctx, "commandstats")
		if err != nil {
			return nil, err
		}
		for _, cs := range info.Commandstats() {
			s, seen := sum[cs.Command]
			if !seen {
				order = append(order, cs.Command)
			}
			s.Command, s.Calls, s.Usec = cs.Command, s.Calls+cs.Calls, s.Usec+cs.Usec
			s.RejectedCalls, s.FailedCalls = s.RejectedCalls+cs.RejectedCalls, s.FailedCalls+cs.FailedCalls
			sum[cs.Command] = s
		}
	}
	out := make([]redisadmin.CommandStat, 0, len(order))
	for _, name := range order {
		s := sum[name]
		if s.Calls > 0 {
			s.UsecPerCall = float64(s.Usec) / float64(s.Calls)
		}
		out = append(out, s)
	}
	return out, nil
}
