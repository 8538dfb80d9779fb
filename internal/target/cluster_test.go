package target

import (
	"context"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"redline/internal/autotune"
	"redline/internal/bench/cmdline"
	"redline/internal/redistest"
	"redline/internal/stats"
	"redline/internal/tune"
)

// allAre reports whether every value is want.
func allAre(vals []string, want string) bool {
	return !slices.ContainsFunc(vals, func(v string) bool { return v != want })
}

// TestAutotuneClusterTrial: on an existing cluster (3 primaries with a
// replica each), a trial's CONFIG SET and a profile's Redis settings are
// on every node, primaries and replicas, during the measurement and back
// as found on every node after it; the restart knobs and steer are not
// tried, with why.
func TestAutotuneClusterTrial(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	c := redistest.StartCluster(t, 3, 1)
	wl, err := cmdline.ParseWorkload(trialWorkload)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "tune")
	o := Options{Spec: Spec{Cluster: true, Addr: c.Seed()}, StateDir: state}
	ctx := context.Background()
	tg, err := Open(ctx, o, wl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	if !strings.Contains(tg.where, "existing Redis Cluster at "+c.Seed()+" (6 nodes") || len(tg.clusterNodes()) != 6 {
		t.Errorf("target %q, nodes %v", tg.where, tg.clusterNodes())
	}
	for knob, want := range map[string]string{"redis.io-threads": "needs a server restart", "steer": "a cluster's nodes are several processes", "irq.numa-bind": "several processes"} {
		if _, why, ok := tg.untried(ctx, autotune.Candidate{Knob: knob, Values: []string{"2", "on"}}); ok || !strings.Contains(why, want) {
			t.Errorf("%s: tried %v, why %q; want untried, %q", knob, ok, why, want)
		}
	}
	for _, tc := range []struct {
		cfg         autotune.Config
		name        string
		during, was string
	}{
		{autotune.Config{{Knob: "redis.hz", Value: "50"}}, "hz", "50", "10"},
		{autotune.Config{{Knob: "profile.redis-config", Value: "on"}}, "lazyfree-lazy-user-del", "yes", "no"},
	} {
		var during []string
		tg.beforeMeasure = func(*trialServer) { during = redistest.ClusterConfig(t, c, tc.name) }
		if m, err := tg.Trial(ctx, tc.cfg, autotune.TrialOptions{}); err != nil || m.Value <= 0 {
			t.Fatalf("trial %s: %v, %v", tc.cfg, m, err)
		}
		after := redistest.ClusterConfig(t, c, tc.name)
		if !allAre(during, tc.during) || !allAre(after, tc.was) {
			t.Errorf("%s: %v on the nodes during the trial, %v after; want %s on every node, then %s", tc.name, during, after, tc.during, tc.was)
		}
		noPending(t, state)
	}
	// The server's time by command (the confirmation's sampled runs) is
	// the cluster's: summed over its nodes, not the seed's share.
	seedSets := func() int64 {
		info, err := tg.base().admin.Info(ctx, "commandstats")
		if err != nil {
			t.Fatal(err)
		}
		for _, cs := range info.Commandstats() {
			if cs.Command == "set" {
				return cs.Calls
			}
		}
		return 0
	}
	before := seedSets()
	m, err := tg.Trial(ctx, autotune.Config{}, autotune.TrialOptions{Breakdown: true})
	if err != nil {
		t.Fatal(err)
	}
	seedShare := seedSets() - before
	i := slices.IndexFunc(m.Commands, func(c autotune.CommandTime) bool { return c.Command == "set" })
	if i < 0 || m.Commands[i].Calls <= seedShare {
		t.Errorf("commands of a sampled trial: %+v; the seed alone made %d SETs in it", m.Commands, seedShare)
	}
}

// TestAutotuneClusterPlanFile: a confirmed plan of a cluster session
// lists its Redis setting once per node, each with the measured effect of
// the trial that kept that knob (found by knob, not by position: a
// profile before it in the final config makes no change here).
func TestAutotuneClusterPlanFile(t *testing.T) {
	prof := autotune.Setting{Knob: "profile.redis-config", Value: "on"}
	hz := autotune.Setting{Knob: "redis.hz", Value: "50"}
	final := autotune.Config{prof, hz}
	kept := func(n int, s autotune.Setting, ratio float64) autotune.Trial {
		return autotune.Trial{N: n, Phase: autotune.PhaseScreen, Setting: s, Rounds: 9, Decision: autotune.Kept,
			Result: stats.Comparison{N: 9, Ratio: ratio, CILow: ratio - 0.1, CIHigh: ratio + 0.1, HasCI: true, Paired: true}}
	}
	res := &autotune.Result{
		Trials:       []autotune.Trial{kept(1, prof, 1.2), kept(2, hz, 1.7)},
		Final:        final,
		Confirmation: &autotune.Confirmation{Config: final, Confirmed: true, Result: stats.Comparison{N: 18, Ratio: 1.8, CILow: 1.5, CIHigh: 2, HasCI: true, Level: 0.05}},
	}
	nodes := []string{"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"}
	b, err := PlanYAML(&Outcome{Result: res, Addr: nodes[0], Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	p, err := tune.ParsePlan(b, ".yaml")
	if err != nil || len(p.Changes) != 3 {
		t.Fatalf("plan %+v, %v\n%s", p, err, b)
	}
	for i, ch := range p.Changes {
		if ch.Target != "hz" || ch.Node != nodes[i] {
			t.Errorf("change %d: %+v, want hz on %s", i, ch, nodes[i])
		}
	}
	if strings.Count(string(b), "measured: x1.700") != 3 || strings.Contains(string(b), "measured: x1.200") {
		t.Errorf("plan.yaml's measured effects:\n%s", b)
	}
}

// nodeConfig reads one setting of every node of a trial's cluster.
func nodeConfig(t *testing.T, s *trialServer, name string) []string {
	t.Helper()
	var out []string
	for _, n := range s.cluster.nodes {
		cfg, err := s.cluster.admins[n].ConfigGet(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cfg[name])
	}
	return out
}

// TestAutotuneClusterStartupTrial: on a managed cluster, a start-up
// knob's trial runs on a cluster of its own started beside the baseline's
// with the changed spec on every node; the baseline's cluster keeps its
// settings and nodes, a run-time knob on the start-up trial's cluster goes
// to that cluster's nodes, and the pool never holds more than
// maxTrialServers clusters.
func TestAutotuneClusterStartupTrial(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	wl, err := cmdline.ParseWorkload(trialWorkload)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "tune")
	o := Options{Spec: Spec{Cluster: true, Primaries: 3, ServerConfig: []string{"hz 20"}}, StateDir: state}
	ctx := context.Background()
	tg, err := Open(ctx, o, wl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	base := tg.base()
	baseNodes := slices.Clone(base.cluster.nodes)
	var seen *trialServer
	var hz []string
	tg.beforeMeasure = func(s *trialServer) { seen, hz = s, nodeConfig(t, s, "hz") }
	trial := func(c autotune.Config) {
		t.Helper()
		if m, err := tg.Trial(ctx, c, autotune.TrialOptions{}); err != nil || m.Value <= 0 {
			t.Fatalf("trial %s: %v, %v", c, m, err)
		}
	}
	trial(autotune.Config{{Knob: "redis.io-threads", Value: "2"}, {Knob: "redis.hz", Value: "50"}})
	if seen == base || seen.cluster == nil || !allAre(nodeConfig(t, seen, "io-threads"), "2") || !allAre(hz, "50") || len(seen.cluster.nodes) != 3 {
		t.Errorf("io-threads trial ran on %s: io-threads %v, hz during %v", seen.addr, nodeConfig(t, seen, "io-threads"), hz)
	}
	if after := nodeConfig(t, seen, "hz"); !allAre(after, "20") {
		t.Errorf("hz on the trial's cluster after it: %v, want 20", after)
	}
	first := seen.addr
	trial(autotune.Config{{Knob: "redis.tcp-backlog", Value: "4096"}})
	trial(autotune.Config{{Knob: "redis.io-threads-do-reads", Value: "yes"}})
	if conn, err := net.DialTimeout("tcp", first, time.Second); err == nil { // the least recently used, stopped
		conn.Close()
		t.Errorf("the io-threads trial's cluster (seed %s) still runs beside %d others", first, len(tg.servers))
	}
	trial(autotune.Config{})
	if seen != base || !slices.Equal(seen.cluster.nodes, baseNodes) || !allAre(nodeConfig(t, seen, "io-threads"), "1") || !allAre(hz, "20") {
		t.Errorf("the baseline's trial ran on %s (nodes %v, want %v)", seen.addr, seen.cluster.nodes, baseNodes)
	}
	if len(tg.servers) > maxTrialServers {
		t.Errorf("%d clusters running side by side", len(tg.servers))
	}
	noPending(t, state)
}

// TestAutotuneClusterApply: --apply on an existing cluster leaves the
// confirmed plan's Redis setting on every node, journaled, and tune
// rollback undoes it on every node (cli/autotune_apply_test.go: a managed
// cluster is refused before anything is measured).
func TestAutotuneClusterApply(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	wl, err := cmdline.ParseWorkload(trialWorkload)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "tune")
	o := Options{Spec: Spec{Cluster: true, Addr: c.Seed()}, StateDir: state}
	ctx := context.Background()
	tg, err := Open(ctx, o, wl)
	if err != nil {
		t.Fatal(err)
	}
	final := autotune.Config{{Knob: "redis.hz", Value: "50"}}
	res := &autotune.Result{Final: final, Confirmation: &autotune.Confirmation{Config: final, Confirmed: true, Result: stats.Comparison{Outcome: stats.Better}}}
	out, err := tg.apply(ctx, res, "redline tune rollback --state-dir "+state)
	if err != nil {
		t.Fatal(err)
	}
	tg.Close()
	if hz := redistest.ClusterConfig(t, c, "hz"); !allAre(hz, "50") {
		t.Fatalf("hz on the nodes after --apply and the session's end: %v, want 50 on every node (%s)", hz, out)
	}
	if rb, err := tune.Rollback(ctx, tune.RollbackOptions{StateDir: state}); err != nil || rb.Count(tune.StatusRestored) != 3 {
		t.Fatalf("tune rollback: %+v, %v; want 3 changes restored", rb, err)
	}
	if hz := redistest.ClusterConfig(t, c, "hz"); !allAre(hz, "10") {
		t.Errorf("hz after tune rollback: %v, want 10 on every node", hz)
	}
}
