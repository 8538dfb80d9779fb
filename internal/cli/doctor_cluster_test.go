package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"redline/internal/redistest"
)

// doctor against a cluster node: every node is checked and labelled, the
// JSON carries the nodes and per-node findings, the text groups them, and
// a node that cannot be reached makes the report incomplete (exit 2)
// while the others are still checked.
func TestDoctorCluster(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	c := redistest.StartCluster(t, 2, 1)
	seed := c.Primaries[0]
	addr := []string{"--host", seed.Host, "--port", strconv.Itoa(seed.Port), "--rule", "cluster-*", "--rule", "maxmemory", "--rule", "overcommit-memory"}
	code, out, errOut := doctorCLI(t, append([]string{"doctor", "--json"}, addr...)...)
	if code == ExitError {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Target struct {
			Redis   string `json:"redis"`
			Cluster bool   `json:"cluster"`
		} `json:"target"`
		Nodes []struct {
			Addr, Role, Error string
			Shard             int
		} `json:"nodes"`
		Findings []struct {
			ID, Status, Node string
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !rep.Target.Cluster || rep.Target.Redis != seed.Addr() || len(rep.Nodes) != 4 {
		t.Fatalf("target %+v, nodes %+v", rep.Target, rep.Nodes)
	}
	perNode := map[string]int{}
	for _, f := range rep.Findings {
		perNode[f.Node]++
		// An empty cluster has too few keys to judge their spread.
		want := map[bool]string{true: "not-checked", false: "ok"}[f.ID == "cluster-key-balance"]
		if strings.HasPrefix(f.ID, "cluster-") && (f.Node != "" || f.Status != want) {
			t.Errorf("%s on %q: %s, want %s for the cluster", f.ID, f.Node, f.Status, want)
		}
	}
	for _, n := range rep.Nodes {
		if perNode[n.Addr] == 0 {
			t.Errorf("no finding for node %s", n.Addr)
		}
	}

	code, out, _ = doctorCLI(t, append([]string{"doctor", "--verbose"}, addr...)...)
	for _, want := range []string{"Redis Cluster through the seed " + seed.Addr(), "Nodes (4):", "=== cluster ===", "=== node " + c.Replicas[1].Addr() + " (replica, shard 2) ==="} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	t.Logf("exit %d\n%s", code, out)

	dead := c.Replicas[0]
	if err := dead.Stop(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = doctorCLI(t, append([]string{"doctor"}, addr...)...)
	if code != ExitError || !strings.Contains(out, dead.Addr()+" (replica, shard 1): could not be read") || !strings.Contains(out, "=== node "+c.Replicas[1].Addr()) {
		t.Errorf("a node down: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
}

// --cluster against a server that is not a cluster node, or with
// --no-redis, is a one-line error and exit 2.
func TestDoctorClusterFlagErrors(t *testing.T) {
	s := redistest.Start(t)
	code, _, errOut := doctorCLI(t, "doctor", "--cluster", "--host", s.Host, "--port", strconv.Itoa(s.Port))
	if code != ExitError || !strings.Contains(errOut, "not a cluster node") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Errorf("--cluster on one server: exit %d, %q", code, errOut)
	}
	code, _, errOut = doctorCLI(t, "doctor", "--cluster", "--no-redis")
	if code != ExitError || !strings.Contains(errOut, "--cluster needs a live server") {
		t.Errorf("--cluster --no-redis: exit %d, %q", code, errOut)
	}
}
