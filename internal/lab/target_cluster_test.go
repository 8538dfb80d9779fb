package lab

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/redistest"
	"redline/internal/testutil"
)

// TestLabManagedCluster runs a scenario on a managed 2-primary cluster
// with a server variant: the workloads reach both primaries (the runs
// carry per-node results) and the variant restarts every node with its
// setting.
func TestLabManagedCluster(t *testing.T) {
	t.Parallel() // waits on its own servers
	testutil.Heavy(t)
	s, err := ParseScenario([]byte(`
name: cluster
target: {kind: managed-cluster, primaries: 2}
workloads:
  - name: set
    bench: redis-benchmark -t set -c 4 -n 2000 -r 100000 -q
variants:
  - name: baseline
    baseline: true
  - name: hz50
    server: {config: ["hz 50"]}
repetitions: 2
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(context.Background(), Options{Scenario: s, ResultPath: filepath.Join(t.TempDir(), "result.json"), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Runs) != 4 {
		t.Fatalf("complete %v, %d runs; want 4", res.Complete, len(res.Runs))
	}
	for _, r := range res.Runs {
		c := r.Summary.Cluster
		if r.Summary.Requests != 2000 || c == nil || len(c.Nodes) != 2 || c.Nodes[0].Requests == 0 || c.Nodes[1].Requests == 0 || r.ServerCPUPerRequest <= 0 {
			t.Errorf("run %d: %d requests, cluster %+v", r.Seq, r.Summary.Requests, c)
		}
	}
	if res.Target.Kind != "managed-cluster" || res.Target.Topology == "" {
		t.Errorf("target %+v", res.Target)
	}
}

func TestClusterScenarioErrors(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"name: x\ntarget: {kind: managed, primaries: 3}\nworkloads: [{name: a, bench: -t set}]\n", "target.primaries: only for kind: managed-cluster"},
		{"name: x\ntarget: {kind: managed-cluster, replicas: -1}\nworkloads: [{name: a, bench: -t set}]\n", "replicas 0..8"},
		{"name: x\ntarget: {kind: managed, cluster: true}\nworkloads: [{name: a, bench: -t set}]\n", "target.cluster: only for kind: address"},
	} {
		if _, err := ParseScenario([]byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.yaml, err, c.want)
		}
	}
}

// TestLabAddressClusterSeed runs a workload against an existing cluster
// given by one seed address marked cluster: true.
func TestLabAddressClusterSeed(t *testing.T) {
	t.Parallel() // waits on its own servers
	c := redistest.StartCluster(t, 2, 0)
	s, err := ParseScenario([]byte(fmt.Sprintf(`
name: seed
target: {kind: address, address: "%s", cluster: true}
workloads:
  - name: get
    bench: redis-benchmark -t get -c 2 -n 1000 -r 1000 -q
repetitions: 1
`, c.Seed())))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(context.Background(), Options{Scenario: s, ResultPath: filepath.Join(t.TempDir(), "result.json"), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 1 || res.Runs[0].Summary.Cluster == nil || len(res.Runs[0].Summary.Cluster.Nodes) != 2 {
		t.Fatalf("runs %+v", res.Runs)
	}
}

// A tuned variant's Redis settings go to every node: nodes lists them, for
// an address seed from its topology, primaries and replicas alike.
func TestClusterTargetNodes(t *testing.T) {
	t.Parallel() // waits on its own servers
	c := redistest.StartCluster(t, 3, 1)
	ctx := context.Background()
	tg := &target{kind: "address", addr: c.Seed(), seedIsCluster: true, existing: true}
	if err := tg.connect(ctx); err != nil {
		t.Fatal(err)
	}
	defer tg.admin.Close()
	got, err := tg.nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, s := range c.Nodes() {
		want[s.Addr()] = true
	}
	for _, a := range got {
		delete(want, a)
	}
	if len(got) != 6 || len(want) != 0 {
		t.Errorf("nodes %v; missing %v", got, want)
	}
	single := &target{kind: "address", addr: c.Seed()}
	if n, err := single.nodes(ctx); err != nil || n != nil {
		t.Errorf("a single server's nodes: %v %v", n, err)
	}
}
