package lab

import (
	"context"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"reflect"
	"strconv"
	"time"

	"redline/internal/atomicfile"
	"redline/internal/labdata"
	"redline/internal/netns"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/target/policy"
)

// target is where the server runs and how the load reaches it.
type target struct {
	kind    string
	trusted bool   // the scenario's binary runs whoever owns it
	logDir  string // where a managed server's log is kept after it stops
	logs    []string
	pair    *netns.Pair
	queues  int // the veth's queues (netns target)
	server  *redisserver.Server
	spec    labdata.ServerSpec // the running server's settings
	running bool
	stale   bool // restart at the next ensure even if the settings match
	addr    string
	user    string
	pass    string
	admin   *redisadmin.Conn
	version string

	// managed-cluster (target_cluster.go): the nodes, and their size.
	cluster             *redisserver.Cluster
	primaries, replicas int
	seedIsCluster       bool                          // an address target that is a cluster seed
	start               []labdata.PlanStep            // the namespaces' starting sysctls
	unstart             []func(context.Context) error // undoes them, before the namespaces go
	// existing is someone's server (kind address, or ssh with a port):
	// never flushed, restarted or stopped.
	existing bool
	host     ServerHost // the server's machine, for kind ssh
	port     int        // the existing server's port there
	remoteID string     // the server the lab started there
}

// newPair makes a netns target's namespaces; a test replaces it to fail.
var newPair = netns.NewPair

// newTarget prepares the topology; the server starts with ensure.
func newTarget(ctx context.Context, t labdata.TargetSpec) (*target, error) {
	tg := &target{kind: t.Kind, addr: t.Address, user: t.User, pass: t.Password, port: t.Port,
		primaries: t.Primaries, replicas: t.Replicas, seedIsCluster: t.Cluster, queues: t.Queues,
		existing: t.Kind == labdata.KindAddress || (t.Kind == labdata.KindSSH && t.Port != 0)}
	if t.Kind == labdata.KindNetns {
		netns.RemoveStale()
		p, err := newPair(ctx, netns.PairOptions{Queues: t.Queues})
		if err != nil {
			return nil, err
		}
		tg.pair = p
	}
	return tg, nil
}

// clientNS is the namespace the load comes from ("" for the current one).
func (t *target) clientNS() string {
	if t.pair != nil {
		return t.pair.Client
	}
	return ""
}

// serverNS is the namespace the server runs in ("" for the current one).
func (t *target) serverNS() string {
	if t.pair != nil {
		return t.pair.Server
	}
	return ""
}

// ensure makes the server run with spec, restarting it when its settings
// differ. An address target is only checked.
func (t *target) ensure(ctx context.Context, spec labdata.ServerSpec) error {
	if t.host != nil {
		return t.ensureRemote(ctx, spec)
	}
	if t.kind == labdata.KindAddress {
		if t.admin != nil {
			return nil
		}
		return t.connect(ctx)
	}
	if t.running && !t.stale && sameSpec(spec, t.spec) {
		return nil
	}
	t.stale = false
	t.stopServer()
	o, err := serverOptions(spec)
	if err != nil {
		return err
	}
	o.AnyOwner = t.trusted
	if t.pass != "" {
		// The target's password is the server's: set by the lab, not by
		// a config line (which a scenario may not write).
		o.Config = append(o.Config, "requirepass "+strconv.Quote(t.pass))
		if t.kind == labdata.KindManagedCluster {
			o.Config = append(o.Config, "masterauth "+strconv.Quote(t.pass))
		}
	}
	if t.kind == labdata.KindManagedCluster {
		return t.ensureCluster(ctx, spec, o)
	}
	if t.pair != nil {
		o.NetNS, o.Bind = t.pair.Server, t.pair.ServerIP
	}
	s, err := redisserver.Start(ctx, o)
	if err != nil {
		return err
	}
	t.server, t.spec, t.running, t.addr = s, spec, true, s.Addr()
	if err := redisserver.CheckAllocator(s.Pid(), serverSpec(spec)); err != nil {
		return err
	}
	return t.connect(ctx)
}

func sameSpec(a, b labdata.ServerSpec) bool { return reflect.DeepEqual(a, b) }

// serverOptions maps a ServerSpec onto redisserver options (CPU pinning
// with taskset, NUMA binding with numactl, the allocator preloaded), with
// room for the lab's clients.
func serverOptions(spec labdata.ServerSpec) (redisserver.Options, error) {
	spec.Config = policy.StartConfig(spec.Config)
	return redisserver.SpecOptions(serverSpec(spec))
}

// serverSpec is what redisserver starts of a scenario's server spec (a
// build is its Binary by now: lab.BuildServers).
func serverSpec(s labdata.ServerSpec) redisserver.Spec {
	return redisserver.Spec{Binary: s.Binary, Config: s.Config, Env: s.Env, Allocator: s.Allocator, CPUs: s.CPUs, NUMANode: s.NUMANode}
}

func (t *target) connect(ctx context.Context) error {
	if t.admin != nil {
		t.admin.Close()
		t.admin = nil
	}
	c, err := redisadmin.Dial(ctx, redisadmin.Options{
		Addr: t.addr, Username: t.user, Password: t.pass, Timeout: 5 * time.Second, NetNS: t.clientNS(),
	})
	if err != nil {
		return err
	}
	info, err := c.Info(ctx, "server")
	if err != nil {
		c.Close()
		return fmt.Errorf("Redis at %s: %w", t.addr, err)
	}
	t.admin, t.version = c, info.Version()
	return nil
}

// flush empties the server before a run, so every run starts alike. An
// address target is someone's server: it is never flushed.
func (t *target) flush(ctx context.Context) error {
	if t.existing {
		return nil
	}
	if t.cluster != nil {
		return t.flushCluster(ctx)
	}
	_, err := t.admin.Do(ctx, "FLUSHALL")
	return err
}

// cpuSeconds returns the server's used_cpu_sys + used_cpu_user.
func (t *target) cpuSeconds(ctx context.Context) (float64, error) {
	if t.cluster != nil {
		return t.clusterCPUSeconds(ctx)
	}
	info, err := t.admin.Info(ctx, "cpu")
	if err != nil {
		return 0, err
	}
	return info.CPUSeconds(), nil
}

func (t *target) pid(ctx context.Context) int {
	if t.admin == nil {
		return 0
	}
	info, err := t.admin.Info(ctx, "server")
	if err != nil {
		return 0
	}
	p, _ := info.ProcessID()
	return p
}

func (t *target) info() labdata.TargetInfo {
	ti := labdata.TargetInfo{Kind: t.kind, Address: t.addr, ServerVersion: t.version, StartState: t.start}
	switch {
	case t.pair != nil:
		ti.Topology = fmt.Sprintf("veth %s (%s, netns %s) <-> %s (%s, netns %s)", t.pair.ClientIf, t.pair.ClientIP, t.pair.Client, t.pair.ServerIf, t.pair.ServerIP, t.pair.Server)
		if t.queues > 1 {
			ti.Topology += fmt.Sprintf("; %d queues, GRO on, TSO/GSO off", t.queues)
		}
	case t.kind == labdata.KindManaged:
		ti.Topology = "loopback"
	case t.kind == labdata.KindManagedCluster:
		ti.Topology = fmt.Sprintf("loopback Redis Cluster: %d primaries, %d replicas each", t.primaries, t.replicas)
	default:
		ti.Topology = "network"
	}
	if t.host != nil {
		t.host.Describe(&ti)
	}
	if t.spec.Binary != "" {
		ti.Binary = t.spec.Binary
	} else if !t.existing {
		ti.Binary = "redis-server"
	}
	return ti
}

func (t *target) stopServer() error {
	if t.admin != nil {
		t.admin.Close()
		t.admin = nil
	}
	if !t.running {
		return nil
	}
	t.running = false
	if t.cluster != nil {
		return t.stopCluster()
	}
	if t.host != nil {
		return t.stopRemote()
	}
	t.keepLog()
	return t.server.Stop()
}

// close stops the server and removes the namespaces, whatever happened.
func (t *target) close() error {
	err := t.stopServer()
	for i := len(t.unstart) - 1; i >= 0; i-- {
		if uerr := t.unstart[i](context.Background()); uerr != nil && err == nil {
			err = uerr
		}
	}
	t.unstart = nil
	if t.pair != nil {
		if perr := t.pair.Remove(); perr != nil && err == nil {
			err = perr
		}
	}
	return err
}

// hostPort splits the target address for bench options.
func hostPort(addr string) (string, int) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return addr, 6379
	}
	n, _ := strconv.Atoi(p)
	return h, n
}

// keepLog copies the server's log next to the results before the server's
// directory goes away with it: its end, through the server's own
// descriptor (Server.Log), never the name in a directory its user owns.
func (t *target) keepLog() {
	if t.logDir == "" || t.server == nil {
		return
	}
	b, err := io.ReadAll(t.server.Log())
	if err != nil {
		return
	}
	p := filepath.Join(t.logDir, fmt.Sprintf("redis-server-%d.log", len(t.logs)+1))
	// Through the one output write: a link planted at the name is
	// replaced, never written through (docs/security.md).
	if atomicfile.Write(p, b, 0o644) == nil {
		t.logs = append(t.logs, p)
	}
}
