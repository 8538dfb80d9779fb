package cli

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"redline/internal/autotune"
	"redline/internal/redisadmin"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/resp"
)

// allAre reports whether every value is want.
func allAre(vals []string, want string) bool {
	return !slices.ContainsFunc(vals, func(v string) bool { return v != want })
}

// someonesKey puts a key on the cluster's primary that serves its slot
// (redisserver.StartCluster gives primary i slots i*16384/n up).
func someonesKey(t *testing.T, c *redisserver.Cluster, password string) *redisserver.Server {
	t.Helper()
	client := func(s *redisserver.Server) *resp.Client {
		cl := redistest.Client(t, s)
		redistest.Do(t, cl, "AUTH", password)
		return cl
	}
	v := redistest.Do(t, client(c.Primaries[0]), "CLUSTER", "KEYSLOT", "someones-key")
	slot, err := strconv.Atoi(v.Str)
	if err != nil {
		t.Fatalf("CLUSTER KEYSLOT: %+v", v)
	}
	n := len(c.Primaries)
	p := c.Primaries[slot*n/redisadmin.ClusterSlots]
	redistest.Do(t, client(p), "SET", "someones-key", "1")
	return p
}

// TestAutotuneClusterAttached: redline autotune --cluster --addr of one
// node of an existing 3-primary cluster with a password runs to its end,
// its load in bench's cluster mode, tries hz on every node, lists the
// restart knob as untested with why, never flushes the cluster's data and
// leaves every node as found, the journal empty; the password is never
// printed or written.
func TestAutotuneClusterAttached(t *testing.T) {
	const password = "s3cret-cluster-pw"
	c := redistest.StartCluster(t, 3, 0)
	for _, s := range c.Nodes() {
		redistest.Do(t, redistest.Client(t, s), "CONFIG", "SET", "requirepass", password)
	}
	t.Setenv("REDISCLI_AUTH", password)
	owner := someonesKey(t, c, password)
	dir := filepath.Join(t.TempDir(), "at")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, errs, code := runCLI(t, ctx, nil, "autotune", "--cluster", "--addr", c.Primaries[1].Addr(), "--dir", dir, "--seed", "1",
		"--knob", "redis.hz", "--knob", "redis.io-threads", "--workload", "-t set -c 4 -P 4 --duration 300ms", "--max-rounds", "8")
	if code != ExitOK && code != ExitFailure || strings.Contains(out, "stopped:") {
		t.Fatalf("autotune: exit %d (want a session run to its end): %s%s", code, out, errs)
	}
	t.Logf("autotune of a cluster:\n%s", out)
	first := out + errs
	for _, want := range []string{"target: the existing Redis Cluster at " + c.Primaries[1].Addr() + " (3 nodes", "redis.io-threads: needs a server restart", "redis.hz = 50"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the answer", want)
		}
	}
	res := readAutotuneResult(t, dir)
	if !slices.ContainsFunc(res.Trials, func(tr autotune.Trial) bool { return tr.Setting.Knob == "redis.hz" }) {
		t.Errorf("no trial of redis.hz: %+v", res.Trials)
	}
	if hz := redistest.ClusterConfig(t, c, "hz", password); !allAre(hz, "10") {
		t.Errorf("hz on the nodes after the session: %v, want 10 as found", hz)
	}
	cl := redistest.Client(t, owner)
	redistest.Do(t, cl, "AUTH", password)
	if v := redistest.Do(t, cl, "EXISTS", "someones-key"); v.Str != "1" {
		t.Error("the cluster's data was flushed")
	}
	noPending(t, filepath.Join(dir, "tune"))
	// --resume reopens the same cluster from the journal (its address
	// given again: the password goes only where the command line says).
	out, errs, rcode := runCLI(t, ctx, nil, "autotune", "--resume", dir, "--addr", c.Primaries[1].Addr())
	if rcode != code || !strings.Contains(out, "target: the existing Redis Cluster at "+c.Primaries[1].Addr()) {
		t.Errorf("--resume: exit %d (the session's was %d): %s%s", rcode, code, out, errs)
	}
	for _, text := range []string{first, out, errs} {
		if strings.Contains(text, password) {
			t.Errorf("the password was printed: %s", text)
		}
	}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if b, _ := os.ReadFile(path); err == nil && !d.IsDir() && strings.Contains(string(b), password) {
			t.Errorf("the password is in %s", path)
		}
		return nil
	})
}

// TestAutotuneClusterManaged: redline autotune --cluster without --addr
// starts a 3-primary cluster here (the lab's managed-cluster), tries a
// run-time knob and a start-up knob (on a cluster of its own), runs to its
// end and stops every node at the end.
func TestAutotuneClusterManaged(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	dir := filepath.Join(t.TempDir(), "at")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, errs, code := runCLI(t, ctx, nil, "autotune", "--cluster", "--server-config", "hz 20", "--dir", dir, "--seed", "1",
		"--knob", "redis.activerehashing", "--knob", "redis.tcp-backlog", "--workload", "-t set -c 4 -P 4 --duration 300ms", "--max-rounds", "8")
	if code != ExitOK && code != ExitFailure || strings.Contains(out, "stopped:") {
		t.Fatalf("autotune: exit %d (want a session run to its end): %s%s", code, out, errs)
	}
	t.Logf("autotune of a managed cluster:\n%s", out)
	m := regexp.MustCompile(`a managed Redis Cluster here, 3 primaries with 0 replicas each \(3 nodes, seed (\S+)\)`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "redis.tcp-backlog = 4096") || !strings.Contains(out, "redis.activerehashing = no") {
		t.Fatalf("answer:\n%s", out)
	}
	if conn, err := net.DialTimeout("tcp", m[1], time.Second); err == nil {
		conn.Close()
		t.Errorf("the cluster's seed %s still answers after the session", m[1])
	}
	noPending(t, filepath.Join(dir, "tune"))
}

// TestAutotuneClusterKill9: kill -9 of redline autotune while a trial's
// hz is applied on every node of the cluster (its measurement running);
// redline tune rollback --state-dir DIR/tune then restores every node.
func TestAutotuneClusterKill9(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	c := redistest.StartCluster(t, 3, 0)
	dir := filepath.Join(t.TempDir(), "at")
	cmd := exec.Command(os.Args[0], "autotune", "--cluster", "--addr", c.Seed(), "--dir", dir, "--seed", "1",
		"--knob", "redis.hz", "--workload", "-t set -c 4 -P 4 --duration 500ms", "--max-rounds", "8")
	cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1")
	var output bytes.Buffer
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(2 * time.Minute)
	var during []string
	for {
		// The trial applied on every node: killed in its measurement.
		if during = redistest.ClusterConfig(t, c, "hz"); !slices.Contains(during, "10") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no trial had hz applied on every node within 2 minutes:\n%s", output.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("autotune was not killed: %v\n%s", cmd.ProcessState, output.String())
	}
	t.Logf("hz on the nodes when killed: %v", during)
	ctx := context.Background()
	out, errs, code := runCLI(t, ctx, nil, "tune", "rollback", "--state-dir", filepath.Join(dir, "tune"))
	if code != ExitOK || !strings.Contains(out, "restored 3") {
		t.Fatalf("tune rollback: exit %d\n%s%s", code, out, errs)
	}
	if hz := redistest.ClusterConfig(t, c, "hz"); !allAre(hz, "10") {
		t.Errorf("hz on the nodes after tune rollback: %v, want 10 on every node", hz)
	}
	noPending(t, filepath.Join(dir, "tune"))
}

// TestAutotuneClusterUsageErrors: cluster flags that cannot go together
// are one line and exit 2, before anything starts.
func TestAutotuneClusterUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--primaries", "3"}, "size a cluster autotune starts (--cluster without --addr)"},
		{[]string{"--cluster", "--socket", "/tmp/x.sock"}, "--cluster needs a TCP seed"},
		{[]string{"--cluster", "--ssh", "h"}, "--cluster with --ssh is not supported yet"},
		{[]string{"--cluster", "--addr", "127.0.0.1:1", "--replicas", "1"}, "an existing one (--addr) has its own"},
		{[]string{"--cluster", "--primaries", "-1"}, "not negative"},
		{[]string{"--cluster", "--server-config", "port 7000"}, `config "port 7000"`},
	} {
		_, stderr, code := runCLI(t, context.Background(), nil, append([]string{"autotune", "--dir", t.TempDir()}, c.args...)...)
		if code != ExitError || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("autotune %v: exit %d, stderr %q; want exit 2 and %q in one line", c.args, code, stderr, c.want)
		}
	}
}
