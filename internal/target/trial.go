package target

// The trial side of redline autotune's host seam (host.go): how
// one config of the catalog's knobs reaches the managed server and the
// host. A config is split by how each knob is applied (knobs.Method):
// changes and tune profiles go into one plan (tune.Compose, the one plan
// composer) applied scoped through the host's journal and rolled back
// after the measurement; steer runs during the measurement through the
// host's Steerer; start-up settings (a redis.conf line, the allocator,
// the CPU set, the binary) pick the server the trial runs on. Each
// knobs.Method is one entry of methods.go.
//
// Servers with different start-up specs run side by side, each on its
// own port, kept in a small pool (trialServers): a paired round
// alternates the incumbent's server and the candidate's without a
// restart between them, so a start-up knob costs one server start per
// comparison, not one per round, and the two runs of a round stay as
// close in time as those of a run-time knob. (The lab restarts one
// server when a variant's spec differs; a round of autotune compares two
// specs at once, so it keeps both.) Every measurement starts from an
// empty keyspace (FLUSHALL, as before), so a newly started server needs
// no data: redline's workloads write what they read or read missing keys
// alike on every server.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"redline/internal/autotune"
	"redline/internal/change"
	"redline/internal/host"
	"redline/internal/knobs"
	"redline/internal/redisadmin"
	"redline/internal/serverhost"
	"redline/internal/steerspec"
	"redline/internal/target/policy"
	"redline/internal/tune"
)

// maxTrialServers bounds the servers kept running side by side: the
// baseline's (never stopped: the noise and the confirmation run on it),
// the incumbent's and a candidate's.
const maxTrialServers = 3

// trialSteer is how steer runs in a trial: decisions every 250 ms, a move
// after two agreeing periods, so it acts within a measurement of seconds.
var trialSteer = steerspec.Spec{Period: 250 * time.Millisecond, Periods: 2}

// trialServer is one managed server of the pool.
type trialServer struct {
	id    string
	key   string // its start-up spec, as JSON
	addr  string
	pid   int
	redis *serverhost.RedisTarget
	admin *redisadmin.Conn
	used  int // the measurement that last used it
	// cluster is its cluster's nodes on a --cluster target (addr its
	// seed, pid its first primary's); nil for a single server.
	cluster *clusterNodes
}

// resolvedCPUs is a server.cpus value on this host.
type resolvedCPUs struct {
	list string // taskset -c; "" unpinned
	node *int   // numactl binding, when the NIC's node is known
	note string // what it reduces to, for people
}

// resolveCPUs resolves the server.cpus values: numa-nic is where
// numa-bind would put Redis (tune.NICCPUs: the NIC's NUMA node's CPUs,
// placement.LocalCPUs); unpinned is no pinning. A value that reduces to
// the baseline's (every online CPU, unpinned) is said to.
func (t *Target) resolveCPUs(ctx context.Context) error {
	t.cpus = map[string]resolvedCPUs{"unpinned": {note: "unpinned"}}
	snap, err := t.host.Snapshot(ctx, serverhost.SnapshotArgs{NoProcesses: true})
	if err != nil {
		return err
	}
	cpus, node, notes, err := tune.NICCPUs(tune.PlanInput{Host: snap})
	if err != nil {
		t.cpusErr = err
		return nil
	}
	r := resolvedCPUs{list: cpus.List(), note: "the NIC's CPUs " + cpus.List()}
	if node >= 0 {
		r.node, r.note = &node, fmt.Sprintf("NUMA node %d (CPUs %s)", node, cpus.List())
	}
	if online := snap.CPU.Online; node < 0 && online != nil && cpus.Equal(*online) {
		r = resolvedCPUs{note: "every online CPU (" + cpus.List() + "): " + strings.Join(notes, "; ")}
	}
	t.cpus["numa-nic"] = r
	return nil
}

// server returns the pool's server started with a, starting it (and
// stopping the least recently used one but the baseline's beyond
// maxTrialServers).
func (t *Target) server(ctx context.Context, a serverhost.RedisStartArgs) (*trialServer, error) {
	b, _ := json.Marshal(a)
	key := string(b)
	t.clock++
	if s, ok := t.servers[key]; ok {
		s.used = t.clock
		return s, nil
	}
	if len(t.servers) >= maxTrialServers {
		t.stopOldest(ctx)
	}
	if t.cluster != nil {
		s, err := t.trialCluster(ctx, a, key)
		if err != nil {
			return nil, err
		}
		s.used, t.servers[key] = t.clock, s
		return s, nil
	}
	started := a
	started.Config = policy.StartConfig(a.Config)
	info, err := t.host.RedisStart(ctx, started)
	if err != nil {
		return nil, fmt.Errorf("start redis-server (%s): %w", key, err)
	}
	s := &trialServer{id: info.ID, key: key, pid: info.Pid, used: t.clock, addr: net.JoinHostPort(info.Host, strconv.Itoa(info.Port))}
	s.redis = &serverhost.RedisTarget{Addr: s.addr, Password: a.Password}
	if s.admin, err = redisadmin.Dial(ctx, redisadmin.Options{Addr: s.addr, Password: a.Password, NetNS: t.clientNetNS}); err != nil {
		t.host.RedisStop(ctx, s.id)
		return nil, err
	}
	t.servers[key] = s
	return s, nil
}

func (t *Target) stopOldest(ctx context.Context) {
	var old *trialServer
	for _, s := range t.servers {
		if s.addr != t.addr && (old == nil || s.used < old.used) {
			old = s
		}
	}
	delete(t.servers, old.key)
	if old.cluster != nil {
		old.cluster.close()
		return
	}
	old.admin.Close()
	t.host.RedisStop(ctx, old.id)
}

// plan composes the trial's changes and profiles over a snapshot of srv's
// host (profiles planned once per server and set: the host is as found
// before every trial), without the host-wide changes the guard refused.
func (t *Target) plan(ctx context.Context, srv *trialServer, p trialParts) (*tune.Plan, error) {
	key := srv.key + "|" + strings.Join(p.profiles, ",")
	prof, ok := t.profilePlans[key]
	if !ok && len(p.profiles) > 0 {
		var err error
		prof, err = tune.Compose(tune.Sources{
			Profiles: p.profiles,
			Input:    tune.PlanInput{PID: srv.pid, Redis: &tune.PlanRedis{Addr: srv.addr}},
			Snapshot: func() (*host.Snapshot, error) {
				return t.host.Snapshot(ctx, serverhost.SnapshotArgs{PIDs: []int{srv.pid}})
			},
		})
		if err != nil {
			return nil, err
		}
		t.profilePlans[key] = prof
	}
	src := tune.Sources{Plans: []*tune.Plan{tune.FromChanges(p.changes, "autotune")}}
	if prof != nil {
		src.Plans = append(src.Plans, prof)
	}
	plan, err := tune.Compose(src)
	if err != nil {
		return nil, err
	}
	plan.Changes = t.guarded(plan.Changes)
	plan.ForNodes(srv.cluster.nodeList()) // a cluster: every node, or none
	plan.Redis = &tune.PlanRedis{Network: srv.redis.Network, Addr: srv.addr, User: srv.redis.User}
	return plan, plan.Validate()
}

// guarded leaves out the host-wide changes when the guard refused them.
func (t *Target) guarded(cs []change.Change) []change.Change {
	if !t.hostWideOff {
		return cs
	}
	return slices.DeleteFunc(slices.Clone(cs), func(c change.Change) bool { return policy.HostWide(c, t.serverNetNS) })
}

// Trial runs c once on its server: its plan applied scoped, steer
// started, the keyspace emptied, one measurement, then steer stopped and
// the plan rolled back (with contexts of their own: an interrupted
// session still restores).
func (t *Target) Trial(ctx context.Context, c autotune.Config, o autotune.TrialOptions) (m autotune.Measurement, err error) {
	p, err := t.partsOf(c)
	if err != nil {
		return m, err
	}
	srv, err := t.server(ctx, p.start)
	if err != nil {
		return m, err
	}
	plan, err := t.plan(ctx, srv, p)
	if err != nil {
		return m, err
	}
	if len(plan.Changes) > 0 {
		// aerr, not err: the deferred rollback's error must reach the
		// named result (a shadowed err dropped it, and a session went on
		// after a trial it could not undo).
		session, aerr := t.applyScoped(ctx, plan, srv.redis)
		if session != "" {
			defer func() {
				if rerr := t.rollback(session, srv.redis); rerr != nil && err == nil {
					err = rerr
				}
			}()
		}
		if aerr != nil {
			return m, aerr
		}
	}
	if p.steer {
		id, serr := t.host.SteerStart(ctx, trialSteer, srv.pid)
		if serr != nil {
			return m, serr
		}
		defer func() { // err: the named result, as the rollback's above
			if serr := t.steerStop(id); serr != nil && err == nil {
				err = serr
			}
		}()
	}
	switch { // an attached server holds someone's data: never flushed
	case t.managed:
		if _, err := srv.admin.Do(ctx, "FLUSHALL"); err != nil {
			return m, fmt.Errorf("FLUSHALL: %w", err)
		}
	case srv.cluster != nil:
		if err := srv.cluster.flush(ctx); err != nil {
			return m, err
		}
	}
	if t.beforeMeasure != nil {
		t.beforeMeasure(srv)
	}
	if o.Breakdown {
		return t.measureSampled(ctx, srv)
	}
	return t.measure(ctx, srv.addr)
}

func (t *Target) steerStop(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), rollbackTimeout)
	defer cancel()
	_, err := t.host.SteerStop(ctx, id)
	return err
}

// untried checks a candidate against the target before the session: it
// drops the values the baseline already has (a comparison of the target
// with itself) and the ones this target cannot try, and says why; ok is
// false when no value is left.
func (t *Target) untried(ctx context.Context, c autotune.Candidate) (autotune.Candidate, string, bool) {
	k, _ := knobs.Lookup(c.Knob)
	var left, why []string
	for _, v := range c.Values {
		if reason := t.cannot(ctx, k, v); reason != "" {
			why = append(why, reason)
			continue
		}
		left = append(left, v)
	}
	c.Values = left
	return c, strings.Join(slices.Compact(why), "; "), len(left) > 0
}

// requirement gives c the knob it depends on (knobs.Requirement), with
// that knob's value on the target as found: the session compares c only
// while the incumbent has the other knob working.
func (t *Target) requirement(ctx context.Context, c autotune.Candidate) autotune.Candidate {
	k, _ := knobs.Lookup(c.Knob)
	if k.Requires == nil {
		return c
	}
	r := &autotune.Requirement{Knob: k.Requires.Knob, Idle: k.Requires.Idle}
	if dep, ok := knobs.Lookup(r.Knob); ok && (dep.Kind == knobs.KindRedisConfig || dep.Kind == knobs.KindRedisRestart) {
		r.Baseline, _ = t.configNow(ctx, dep.Target)
	}
	c.Requires = r
	return c
}

// hostNow reads the value a host change would replace, where it would
// write it (the server host, its namespace), through the host's tune
// preview.
func (t *Target) hostNow(ctx context.Context, ch change.Change) (string, bool) {
	outs, _, err := t.host.TunePreview(ctx, tune.FromChanges([]change.Change{ch}, "autotune"), nil)
	if err != nil || len(outs) != 1 || outs[0].Old == "" {
		return "", false
	}
	return outs[0].Old, true
}

func (t *Target) configNow(ctx context.Context, name string) (string, bool) {
	if t.cluster != nil {
		return t.cluster.configNow(ctx, name)
	}
	cfg, err := t.admin.ConfigGet(ctx, name)
	cur, found := cfg[name]
	return cur, err == nil && found
}

// base is the baseline's server, started first and kept.
func (t *Target) base() *trialServer {
	b, _ := json.Marshal(t.start)
	return t.servers[string(b)]
}

// guard decides the host-wide changes with the lab's production-host
// guard, over the redis-servers that ran before this session started its
// own.
func (t *Target) guard(others []string, allow bool) {
	t.hostWideOff, t.guardLine = policy.Guard(t.host.Info().SSH != "", "autotune", others, allow, "the knobs that make them are not tried", "--allow-host-wide")
}
