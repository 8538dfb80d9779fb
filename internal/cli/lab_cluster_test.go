package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/testutil"
)

// A managed-cluster lab runs the doctor on every node: result.json holds
// findings labelled with each node (appendfsync always, set on every node
// by the scenario, fires on each), and the report shows them.
func TestLabManagedClusterDoctorPerNode(t *testing.T) {
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
