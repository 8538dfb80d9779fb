package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/redistest"
	"redline/internal/testutil"
)

// A managed-cluster lab runs the doctor on every node: result.json holds
// findings labelled with each node (appendfsync always, set on every node
// by the scenario, fires on each), and the report shows them.
func TestLabManagedClusterDoctorPerNode(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	testutil.Heavy(t)
	dir := t.TempDir()
	scenario := filepath.Join(dir, "cluster.yaml")
	os.WriteFile(scenario, []byte(`
name: cluster-doctor
target: {kind: managed-cluster, primaries: 2, replicas: 1}
server: {config: ["appendonly yes", "appendfsync always"]}
doctor: true
workloads:
  - name: set
    bench: redis-benchmark -t set -c 2 -n 500 -r 1000 -q
variants:
  - name: baseline
    baseline: true
repetitions: 1
`), 0o644)
	out := filepath.Join(dir, "out")
	stdout, stderr, code := runCLI(t, context.Background(), nil, "lab", scenario, "--out", out, "--state-dir", filepath.Join(dir, "state"), "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	res, err := labdata.ReadResult(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, f := range res.Findings {
		if f.ID == "appendfsync-always" {
			nodes[f.Node] = true
		}
	}
	roles := map[string]int{}
	for n := range nodes {
		switch {
		case strings.Contains(n, "(primary, shard "):
			roles["primary"]++
		case strings.Contains(n, "(replica, shard "):
			roles["replica"]++
		}
	}
	if len(nodes) != 4 || roles["primary"] != 2 || roles["replica"] != 2 {
		t.Errorf("appendfsync-always on nodes %v, want each of the 4 nodes labelled with its role and shard", nodes)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "`appendfsync-always` on node `127.0.0.1:") {
		t.Errorf("report.md does not name the nodes of the findings")
	}
}

// A tuned variant on a managed cluster sets its Redis settings on every
// node (3 primaries, a replica each): result.json's applied changes name
// each node, once per node and setting, the variant is rolled back, and
// the report shows the node of each change.
func TestLabManagedClusterTunedEveryNode(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	testutil.Heavy(t)
	dir := t.TempDir()
	scenario := filepath.Join(dir, "cluster.yaml")
	os.WriteFile(scenario, []byte(`
name: cluster-tuned
target: {kind: managed-cluster, primaries: 3, replicas: 1}
doctor: false
workloads:
  - name: set
    bench: redis-benchmark -t set -c 2 -n 300 -r 1000 -q
variants:
  - name: baseline
    baseline: true
  - name: tuned
    tune: {profiles: [redis-config]}
repetitions: 1
`), 0o644)
	out := filepath.Join(dir, "out")
	state := filepath.Join(dir, "state")
	stdout, stderr, code := runCLI(t, context.Background(), nil, "lab", scenario, "--out", out, "--state-dir", state, "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	res, err := labdata.ReadResult(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tuned *labdata.VariantInfo
	for i := range res.Variants {
		if res.Variants[i].Name == "tuned" {
			tuned = &res.Variants[i]
		}
	}
	if tuned == nil || !tuned.RolledBack {
		t.Fatalf("tuned variant: %+v", tuned)
	}
	applied := map[string]map[string]bool{} // setting -> nodes
	for _, st := range tuned.Plan {
		if st.Change.Kind != "redis-config" {
			continue
		}
		if st.Status != "applied" || st.Change.Node == "" {
			t.Errorf("%s: %s %s", st.Change.Key(), st.Status, st.Note)
			continue
		}
		if applied[st.Change.Target] == nil {
			applied[st.Change.Target] = map[string]bool{}
		}
		applied[st.Change.Target][st.Change.Node] = true
	}
	for _, setting := range []string{"lazyfree-lazy-eviction", "latency-monitor-threshold"} {
		if len(applied[setting]) != 6 {
			t.Errorf("%s applied on nodes %v, want all 6", setting, applied[setting])
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "`latency-monitor-threshold on 127.0.0.1:") {
		t.Errorf("report.md does not name the node of each applied change")
	}
	if st, err := os.Stat(filepath.Join(state, "journal.jsonl")); err == nil {
		t.Errorf("journal left after the lab: %d bytes", st.Size())
	}
}

// The same on an address target that is a cluster seed: the nodes come
// from its topology, and each is back at its own value after the lab.
func TestLabClusterAddressTunedEveryNode(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	dir := t.TempDir()
	scenario := filepath.Join(dir, "cluster.yaml")
	os.WriteFile(scenario, []byte(`
name: cluster-address-tuned
target: {kind: address, address: "`+c.Seed()+`", cluster: true}
doctor: false
workloads:
  - name: set
    bench: redis-benchmark -t set -c 2 -n 300 -r 1000 -q
variants:
  - name: baseline
    baseline: true
  - name: tuned
    tune: {profiles: [redis-config]}
repetitions: 1
`), 0o644)
	out := filepath.Join(dir, "out")
	stdout, stderr, code := runCLI(t, context.Background(), nil, "lab", scenario, "--out", out, "--state-dir", filepath.Join(dir, "state"), "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	res, err := labdata.ReadResult(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	nodes := map[string]bool{}
	for _, v := range res.Variants {
		for _, st := range v.Plan {
			if st.Change.Target == "latency-monitor-threshold" && st.Status == "applied" {
				nodes[st.Change.Node] = true
			}
		}
	}
	for _, s := range c.Nodes() {
		if !nodes[s.Addr()] {
			t.Errorf("latency-monitor-threshold not applied on node %s (applied on %v)", s.Addr(), nodes)
		}
		v := redistest.Do(t, redistest.Client(t, s), "CONFIG", "GET", "latency-monitor-threshold")
		if len(v.Elems) != 2 || v.Elems[1].Str != "0" {
			t.Errorf("latency-monitor-threshold on %s after the lab: %+v, want 0 (rolled back)", s.Addr(), v)
		}
	}
}
