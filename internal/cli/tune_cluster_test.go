package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/redistest"
)

// redline tune apply, status, verify and rollback of a plan whose Redis
// settings go to each node of a cluster; a node down refuses the whole
// plan, naming the node, before anything changes.
func TestTuneCLIClusterPlan(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	ctx := context.Background()
	root, _ := makeTuneTree(t)
	dir := t.TempDir()
	var b strings.Builder
	fmt.Fprintln(&b, "version: 1\nchanges:")
	for _, s := range c.Nodes() {
		fmt.Fprintf(&b, "  - {kind: redis-config, target: hz, value: \"33\", node: %q}\n", s.Addr())
	}
	plan := filepath.Join(dir, "plan.yaml")
	os.WriteFile(plan, []byte(b.String()), 0o644)
	state := filepath.Join(dir, "state")

	out, errs, code := runCLI(t, ctx, nil, "tune", "apply", plan, "--root", root, "--state-dir", state, "--yes")
	if code != 0 || !strings.Contains(out, "applied 3") {
		t.Fatalf("apply: code %d\n%s%s", code, out, errs)
	}
	out, _, code = runCLI(t, ctx, nil, "tune", "status", "--state-dir", state)
	for _, s := range c.Nodes() {
		if !strings.Contains(out, "redis-config hz on "+s.Addr()) {
			t.Errorf("status does not name node %s:\n%s", s.Addr(), out)
		}
	}
	if out, _, code = runCLI(t, ctx, nil, "tune", "verify", plan, "--root", root); code != 0 {
		t.Fatalf("verify plan after apply: code %d\n%s", code, out)
	}
	out, errs, code = runCLI(t, ctx, nil, "tune", "rollback", "--state-dir", state)
	if code != 0 || !strings.Contains(out, "restored 3") {
		t.Fatalf("rollback: code %d\n%s%s", code, out, errs)
	}

	dead := c.Primaries[1]
	dead.Stop()
	out, errs, code = runCLI(t, ctx, nil, "tune", "apply", plan, "--root", root, "--state-dir", state, "--yes")
	t.Logf("apply with a node down: %s", errs)
	if code == 0 || !strings.Contains(errs, dead.Addr()) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("apply with node %s down: code %d, want one error line naming it\n%s%s", dead.Addr(), code, out, errs)
	}
	for _, i := range []int{0, 2} {
		s := c.Primaries[i]
		if v := redistest.Do(t, redistest.Client(t, s), "CONFIG", "GET", "hz"); len(v.Elems) != 2 || v.Elems[1].Str != "10" {
			t.Errorf("hz on %s after the refused apply: %+v, want 10", s.Addr(), v)
		}
	}
}

// tune plan with --redis at a cluster node plans a node-less Redis setting
// for every node of the cluster, with a note saying so.
func TestTunePlanClusterEveryNode(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	ctx := context.Background()
	root, _ := makeTuneTree(t)
	dir := t.TempDir()
	changes := filepath.Join(dir, "changes.yaml")
	os.WriteFile(changes, []byte("version: 1\nredis: {addr: "+c.Seed()+"}\nchanges:\n  - {kind: redis-config, target: hz, value: \"33\"}\n"), 0o644)
	plan := filepath.Join(dir, "plan.yaml")
	out, errs, code := runCLI(t, ctx, nil, "tune", "plan", changes, "--root", root, "--redis", c.Seed(), "-o", plan)
	if code != 0 {
		t.Fatalf("plan: code %d\n%s%s", code, out, errs)
	}
	b, _ := os.ReadFile(plan)
	for _, s := range c.Nodes() {
		if !strings.Contains(string(b), "node: "+s.Addr()) || !strings.Contains(out, "redis-config hz on "+s.Addr()) {
			t.Errorf("node %s missing from the plan or its preview:\n%s\n%s", s.Addr(), b, out)
		}
	}
	if !strings.Contains(string(b), "each of its 6 nodes") {
		t.Errorf("plan lacks the cluster note:\n%s", b)
	}
}
