package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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
	t.Parallel() // waits on its own servers (or builds)
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

// freezeProxy forwards TCP to addr and, the first time a client sends
// CONFIG SET, holds that command (never forwarding it) and closes frozen:
// a node redline is about to write, stopped there.
func freezeProxy(t *testing.T, addr string) (string, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	frozen := make(chan struct{})
	var once sync.Once
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			go io.Copy(c, s)
			go func() {
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if err != nil {
						s.Close()
						return
					}
					if bytes.Contains(bytes.ToUpper(buf[:n]), []byte("CONFIG\r\n$3\r\nSET")) {
						hold := false
						once.Do(func() { hold = true; close(frozen) })
						if hold {
							return // never forwarded; the client waits
						}
					}
					s.Write(buf[:n])
				}
			}()
		}
	}()
	return ln.Addr().String(), frozen
}

// SIGKILL of a `redline tune apply` process in the middle of a cluster
// plan (nodes 1 and 2 changed, node 3's intent on disk and its CONFIG SET
// in flight): `redline tune rollback` restores every node from the
// journal.
func TestTuneCLIClusterSIGKILLMidApply(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	ctx := context.Background()
	root, _ := makeTuneTree(t)
	dir := t.TempDir()
	third, frozen := freezeProxy(t, c.Primaries[2].Addr())
	nodes := []string{c.Primaries[0].Addr(), c.Primaries[1].Addr(), third}
	var b strings.Builder
	fmt.Fprintln(&b, "version: 1\nchanges:")
	for _, n := range nodes {
		fmt.Fprintf(&b, "  - {kind: redis-config, target: hz, value: \"33\", node: %q}\n", n)
	}
	plan := filepath.Join(dir, "plan.yaml")
	os.WriteFile(plan, []byte(b.String()), 0o644)
	state := filepath.Join(dir, "state")

	cmd := exec.Command(os.Args[0], "tune", "apply", plan, "--yes", "--root", root, "--state-dir", state)
	cmd.Env = append(os.Environ(), "REDLINE_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-frozen:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the apply never reached node 3's CONFIG SET:\n%s", stderr.String())
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the apply was not killed: %v\n%s", cmd.ProcessState, stderr.String())
	}
	hz := func(i int) string {
		v := redistest.Do(t, redistest.Client(t, c.Primaries[i]), "CONFIG", "GET", "hz")
		if len(v.Elems) != 2 {
			t.Fatalf("CONFIG GET hz: %+v", v)
		}
		return v.Elems[1].Str
	}
	if hz(0) != "33" || hz(1) != "33" || hz(2) != "10" {
		t.Fatalf("before rollback: hz %s %s %s, want 33 33 10", hz(0), hz(1), hz(2))
	}
	out, _, code := runCLI(t, ctx, nil, "tune", "status", "--state-dir", state)
	if code != 0 || !strings.Contains(out, "redis-config hz on "+third) || !strings.Contains(out, "redis-config hz on "+nodes[0]) {
		t.Errorf("status after the kill: code %d\n%s", code, out)
	}
	out, errs, code := runCLI(t, ctx, nil, "tune", "rollback", "--state-dir", state)
	if code != 0 || !strings.Contains(out, "restored 3") {
		t.Fatalf("rollback: code %d\n%s%s", code, out, errs)
	}
	for i := range 3 {
		if v := hz(i); v != "10" {
			t.Errorf("hz = %s on %s after rollback, want 10", v, c.Primaries[i].Addr())
		}
	}
}
