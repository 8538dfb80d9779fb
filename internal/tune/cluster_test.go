package tune

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"redline/internal/change"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/resp"
)

// A plan for a cluster: every Redis setting on every node (3 primaries,
// one replica each), through the same ForNodes a lab and the doctor use.

func clusterAddrs(c *redisserver.Cluster) []string {
	var out []string
	for _, s := range c.Nodes() {
		out = append(out, s.Addr())
	}
	return out
}

func clusterPlan(c *redisserver.Cluster) *Plan {
	p := &Plan{Version: PlanVersion, Changes: []change.Change{
		{Kind: change.KindRedisConfig, Target: "hz", Value: "33", Rule: "test"},
		{Kind: change.KindRedisConfig, Target: "appendonly", Value: "yes", Rule: "test"},
	}, Redis: &PlanRedis{Addr: c.Seed()}}
	p.ForNodes(clusterAddrs(c))
	return p
}

func configEach(t *testing.T, c *redisserver.Cluster, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, s := range c.Nodes() {
		out[s.Addr()] = configGet(t, s, name)
	}
	return out
}

func requireEach(t *testing.T, c *redisserver.Cluster, name, want, what string) {
	t.Helper()
	for addr, v := range configEach(t, c, name) {
		if v != want {
			t.Errorf("%s: %s = %s on node %s, want %s", what, name, v, addr, want)
		}
	}
}

func TestClusterApplyEveryNodeAndRollback(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	p := clusterPlan(c)
	n := len(c.Nodes()) // 3 primaries, a replica each
	if len(p.Changes) != 2*n {
		t.Fatalf("ForNodes made %d changes, want 2 x %d nodes: %v", len(p.Changes), n, p.Changes)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	hz, aof := configEach(t, c, "hz"), configEach(t, c, "appendonly")
	s := RehearsalSystem(t.TempDir())
	defer s.Close()
	state := t.TempDir()
	res, err := Apply(bg, s, p, ApplyOptions{StateDir: state})
	if err != nil || res.Count(StatusApplied) != 2*n {
		t.Fatalf("apply: %+v %v", res, err)
	}
	requireEach(t, c, "hz", "33", "after apply")
	requireEach(t, c, "appendonly", "yes", "after apply")

	// The journal names each node, once per node and setting, and holds
	// no password.
	b, _ := os.ReadFile(filepath.Join(state, journalName))
	for _, addr := range clusterAddrs(c) {
		if n := strings.Count(string(b), `"node":"`+addr+`"`); n != 2 {
			t.Errorf("journal names node %s %d times, want 2 (hz, appendonly)", addr, n)
		}
	}
	st, err := Journaled(bg, StatusOptions{StateDir: state})
	if err != nil || len(st.Sessions) != 1 || len(st.Sessions[0].Changes) != 2*n {
		t.Fatalf("status: %+v %v", st, err)
	}
	for _, l := range st.Sessions[0].Changes {
		if l.Status != StatusApplied || l.Change.Node == "" {
			t.Errorf("status of %s: %s %s", l.Change.Key(), l.Status, l.Reason)
		}
	}
	outs, err := Verify(bg, s, p)
	if err != nil || count(outs, StatusOK) != 2*n {
		t.Fatalf("verify: %+v %v", outs, err)
	}

	rb, err := Rollback(bg, RollbackOptions{StateDir: state})
	if err != nil || rb.Count(StatusRestored) != 2*n || !rb.Archived {
		t.Fatalf("rollback: %+v %v", rb, err)
	}
	for addr, v := range configEach(t, c, "hz") {
		if v != hz[addr] {
			t.Errorf("hz = %s on %s after rollback, want %s", v, addr, hz[addr])
		}
	}
	for addr, v := range configEach(t, c, "appendonly") {
		if v != aof[addr] {
			t.Errorf("appendonly = %s on %s after rollback, want %s", v, addr, aof[addr])
		}
	}
}

// A node that is down before the apply: the error names it, and no node
// is changed.
func TestClusterNodeDownChangesNone(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	p := clusterPlan(c)
	hz := configEach(t, c, "hz")
	dead := c.Primaries[2]
	if err := dead.Stop(); err != nil {
		t.Fatal(err)
	}
	s := RehearsalSystem(t.TempDir())
	defer s.Close()
	state := t.TempDir()
	_, err := Apply(bg, s, p, ApplyOptions{StateDir: state})
	if err == nil || !strings.Contains(err.Error(), dead.Addr()) {
		t.Fatalf("apply with node %s down: %v, want an error naming it", dead.Addr(), err)
	}
	for _, srv := range c.Nodes() {
		if srv == dead {
			continue
		}
		if v := configGet(t, srv, "hz"); v != hz[srv.Addr()] {
			t.Errorf("hz = %s on %s after the refused apply, want %s", v, srv.Addr(), hz[srv.Addr()])
		}
	}
	if st, err := Journaled(bg, StatusOptions{StateDir: state}); err != nil || len(st.Sessions) != 0 {
		t.Errorf("journal after the refused apply: %+v %v", st, err)
	}
}

// A node that dies after the first nodes were changed: the apply fails
// naming it and rolls the changed nodes back (node 3 of 3 fails, 1 and 2
// are restored).
func TestClusterNodeFailsMidApplyRollsBackOthers(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	p := &Plan{Version: PlanVersion, Changes: []change.Change{{Kind: change.KindRedisConfig, Target: "hz", Value: "33"}}}
	p.ForNodes(clusterAddrs(c))
	hz := configEach(t, c, "hz")
	dead := c.Primaries[2]
	s := RehearsalSystem(t.TempDir())
	defer s.Close()
	hook := func(step int, at phase) bool {
		if step == 2 && at == afterDone {
			dead.Stop()
		}
		return false
	}
	res, err := Apply(bg, s, p, ApplyOptions{StateDir: t.TempDir(), hook: hook})
	if err == nil || !strings.Contains(err.Error(), dead.Addr()) {
		t.Fatalf("apply with node %s dying: %v, want an error naming it", dead.Addr(), err)
	}
	if res == nil || res.Undo == nil || res.Undo.Count(StatusRestored) != 2 {
		t.Fatalf("undo after the failure: %+v", res)
	}
	for _, srv := range c.Primaries[:2] {
		if v := configGet(t, srv, "hz"); v != hz[srv.Addr()] {
			t.Errorf("hz = %s on %s after the failed apply, want %s", v, srv.Addr(), hz[srv.Addr()])
		}
	}
}

// A setting refused on one node but changed on others is a failure: a
// cluster's nodes get it all or none.
func TestNodesSplit(t *testing.T) {
	hz := func(node string, st Status) Outcome {
		return Outcome{Change: change.Change{Kind: change.KindRedisConfig, Target: "hz", Value: "33", Node: node}, Status: st, Reason: "no"}
	}
	if err := nodesSplit([]Outcome{hz("a:1", StatusApplied), hz("b:1", StatusRefused)}); err == nil || !strings.Contains(err.Error(), "node b:1") {
		t.Errorf("split: %v", err)
	}
	if err := nodesSplit([]Outcome{hz("a:1", StatusPlanned), hz("b:1", StatusUnchanged)}); err != nil {
		t.Errorf("no split: %v", err)
	}
	if err := nodesSplit([]Outcome{hz("a:1", StatusRefused), hz("b:1", StatusRefused)}); err != nil {
		t.Errorf("refused everywhere is report-only: %v", err)
	}
}

// SIGKILL of an apply in the middle of a cluster plan (after hz on node 2
// was recorded, with node 3's intent on disk, and with appendonly written
// on node 2 and not recorded): rollback from the
// journal alone restores every node.
func TestClusterSIGKILLDuringApply(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	p := clusterPlan(c)
	planPath := filepath.Join(t.TempDir(), "plan.json")
	var buf bytes.Buffer
	p.EncodeJSON(&buf)
	os.WriteFile(planPath, buf.Bytes(), 0o644)
	hz, aof := configEach(t, c, "hz"), configEach(t, c, "appendonly")
	n := len(c.Nodes())
	for _, k := range []struct {
		step int
		at   string
	}{{2, "done"}, {3, "intent"}, {n + 2, "written"}} {
		state := t.TempDir()
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "REDLINE_TUNE_CHILD_PLAN="+planPath, "REDLINE_TUNE_CHILD_ROOT="+t.TempDir(),
			"REDLINE_TUNE_CHILD_STATE="+state, "REDLINE_TUNE_CHILD_STEP="+strconv.Itoa(k.step), "REDLINE_TUNE_CHILD_AT="+k.at)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if strings.TrimSpace(line) != "ready" {
			t.Fatalf("step %d %s: the child never got there:\n%s", k.step, k.at, stderr.String())
		}
		if k.step == n+2 && configGet(t, c.Primaries[1], "appendonly") != "yes" {
			t.Errorf("appendonly written: node %s not changed before the kill", c.Primaries[1].Addr())
		}
		rb, err := Rollback(bg, RollbackOptions{StateDir: state})
		if err != nil || !rb.Archived || rb.Count(StatusDrift) != 0 {
			t.Fatalf("step %d %s: rollback: %+v %v", k.step, k.at, rb, err)
		}
		for addr, v := range configEach(t, c, "hz") {
			if v != hz[addr] {
				t.Errorf("step %d %s: hz = %s on %s after rollback, want %s", k.step, k.at, v, addr, hz[addr])
			}
		}
		for addr, v := range configEach(t, c, "appendonly") {
			if v != aof[addr] {
				t.Errorf("step %d %s: appendonly = %s on %s after rollback, want %s", k.step, k.at, v, addr, aof[addr])
			}
		}
	}
}

// Nodes that need a password get the one given to apply and rollback;
// neither the plan, the journal nor the history holds it.
func TestClusterPasswordNeverJournaled(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	const pw = "s3cret-cluster-pw"
	admin := map[string]*resp.Client{}
	for _, s := range c.Nodes() {
		cl := redistest.Client(t, s)
		redistest.Do(t, cl, "CONFIG", "SET", "requirepass", pw)
		redistest.Do(t, cl, "AUTH", pw)
		admin[s.Addr()] = cl
	}
	// Before the cluster's own cleanup stops the nodes (it does not AUTH).
	t.Cleanup(func() {
		for _, cl := range admin {
			cl.Do(bg, "CONFIG", "SET", "requirepass", "")
		}
	})
	hzOf := func(addr string) string {
		v := redistest.Do(t, admin[addr], "CONFIG", "GET", "hz")
		if len(v.Elems) < 2 {
			t.Fatalf("CONFIG GET hz on %s: %+v", addr, v)
		}
		return v.Elems[1].Str
	}
	p := &Plan{Version: PlanVersion, Changes: []change.Change{{Kind: change.KindRedisConfig, Target: "hz", Value: "33"}}}
	p.ForNodes(clusterAddrs(c))
	before := map[string]string{}
	for _, a := range clusterAddrs(c) {
		before[a] = hzOf(a)
	}
	s := RehearsalSystem(t.TempDir())
	s.Redis.Password = pw
	defer s.Close()
	state := t.TempDir()
	if res, err := Apply(bg, s, p, ApplyOptions{StateDir: state}); err != nil || res.Count(StatusApplied) != 3 {
		t.Fatalf("apply: %+v %v", res, err)
	}
	for _, a := range clusterAddrs(c) {
		if v := hzOf(a); v != "33" {
			t.Errorf("hz = %s on %s after apply", v, a)
		}
	}
	if rb, err := Rollback(bg, RollbackOptions{StateDir: state, RedisPassword: pw}); err != nil || rb.Count(StatusRestored) != 3 {
		t.Fatalf("rollback: %+v %v", rb, err)
	}
	for _, a := range clusterAddrs(c) {
		if v := hzOf(a); v != before[a] {
			t.Errorf("hz = %s on %s after rollback, want %s", v, a, before[a])
		}
	}
	filepath.WalkDir(state, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(pw)) {
				t.Errorf("%s holds the password", path)
			}
		}
		return nil
	})
}

// With rewrite, every node changed rewrites its redis.conf after apply,
// and again after rollback.
func TestClusterRewriteEveryNode(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	p := &Plan{Version: PlanVersion, Redis: &PlanRedis{Addr: c.Seed(), Rewrite: true},
		Changes: []change.Change{{Kind: change.KindRedisConfig, Target: "hz", Value: "33"}}}
	p.ForNodes(clusterAddrs(c))
	s := RehearsalSystem(t.TempDir())
	defer s.Close()
	state := t.TempDir()
	if _, err := Apply(bg, s, p, ApplyOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes() {
		if b, _ := os.ReadFile(n.ConfPath); !strings.Contains(string(b), "\nhz 33\n") {
			t.Errorf("%s: redis.conf after apply lacks hz 33:\n%s", n.Addr(), b)
		}
	}
	if _, err := Rollback(bg, RollbackOptions{StateDir: state}); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes() {
		if b, _ := os.ReadFile(n.ConfPath); strings.Contains(string(b), "\nhz 33\n") {
			t.Errorf("%s: redis.conf after rollback still has hz 33", n.Addr())
		}
	}
}
