package ansible_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/testutil"
)

// TestRolloutHaltsOnCanary plays the rollout playbook on three hosts
// (local connections, each with a redis-server under a write load and a
// journal of its own): a plan that hurts (maxmemory of one byte under
// noeviction: every write fails) trips the guard on the canary, which
// rolls it back there, and the two other hosts are never touched; a
// neutral plan (hz 11) reaches all three.
func TestRolloutHaltsOnCanary(t *testing.T) {
	t.Parallel() // ansible in processes of its own
	testutil.Heavy(t)
	testutil.Need(t, "ansible-playbook", "ansible-galaxy", "python3")
	work := t.TempDir()
	bin := filepath.Join(work, "redline")
	build := exec.Command("go", "build", "-o", bin, "./cmd/redline")
	build.Dir, build.Env = "..", append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	coll := installCollection(t)
	var servers []*redisserver.Server
	var inv strings.Builder
	inv.WriteString("all:\n  children:\n    redis:\n      hosts:\n")
	for i := 0; i < 3; i++ {
		s := redistest.Start(t, "maxmemory-policy noeviction")
		servers = append(servers, s)
		writeLoad(t, s)
		fmt.Fprintf(&inv, "        h%d: {ansible_connection: local, ansible_python_interpreter: /usr/bin/python3, redline_bin: %s, redline_redis_port: %d, redline_state_dir: %s, redline_plan_src: %s}\n",
			i+1, bin, s.Port, filepath.Join(work, fmt.Sprintf("state%d", i+1)), filepath.Join(work, fmt.Sprintf("plan%d.yaml", i+1)))
	}
	invPath := filepath.Join(work, "inventory.yml")
	os.WriteFile(invPath, []byte(inv.String()), 0o644)
	play := func(setting, value string) (string, int) {
		for i, s := range servers { // per-host plans: each names its server
			os.WriteFile(filepath.Join(work, fmt.Sprintf("plan%d.yaml", i+1)),
				[]byte(fmt.Sprintf("version: 1\nredis: {addr: %q}\nchanges:\n  - {kind: redis-config, target: %s, value: %q}\n", s.Addr(), setting, value)), 0o644)
		}
		// The guard's rules that read the machine's pace (latency, the
		// server's time per call, the command rate, CPU per command) are set out of reach: the test's
		// steady load shares a busy CI machine, and a 2 s baseline against
		// a 4 s watch saw the neutral plan's command rate halve there (the
		// ops-drop rule tripped on hz 11). The harm under test is the
		// errors rule's.
		cmd := exec.Command("ansible-playbook", "redline.redis_host.rollout", "-i", invPath, "-e", "redline_become=false",
			"-e", "redline_guard_window=4s", "-e", `{"redline_guard_args": ["--guard-baseline", "2s", "--guard-interval", "200ms", "--guard-latency-floor", "1m", "--guard-server-latency-floor", "1m", "--guard-ops-drop", "0", "--guard-cpu-floor", "1000"]}`)
		cmd.Env = append(os.Environ(), "ANSIBLE_COLLECTIONS_PATH="+coll, "HOME="+work, "ANSIBLE_NOCOLOR=1")
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}

	out, code := play("maxmemory", "1")
	if code == 0 || !strings.Contains(out, "h1 the guard tripped and rolled back") || !strings.Contains(out, "guard tripped (errors)") {
		t.Fatalf("the harmful plan: exit %d, want the rollout halted at the canary h1\n%s", code, out)
	}
	for i, s := range servers {
		if v := configOf(t, s, "maxmemory"); v != "0" {
			t.Errorf("h%d: maxmemory %s after the halted rollout, want 0", i+1, v)
		}
		if _, err := os.Stat(filepath.Join(work, fmt.Sprintf("state%d", i+1), "journal.jsonl")); i > 0 && err == nil {
			t.Errorf("h%d was touched (it has a journal) after the canary tripped", i+1)
		}
	}

	out, code = play("hz", "11")
	if code != 0 {
		t.Fatalf("the neutral plan: exit %d\n%s", code, out)
	}
	for i, s := range servers {
		if v := configOf(t, s, "hz"); v != "11" {
			t.Errorf("h%d: hz %s after the rollout, want 11", i+1, v)
		}
	}
}

func configOf(t *testing.T, s *redisserver.Server, name string) string {
	t.Helper()
	v := redistest.Do(t, redistest.Client(t, s), "CONFIG", "GET", name)
	if len(v.Elems) != 2 {
		t.Fatalf("CONFIG GET %s: %+v", name, v)
	}
	return v.Elems[1].Str
}

// writeLoad writes keys to s until the test ends.
func writeLoad(t *testing.T, s *redisserver.Server) {
	c := redistest.Client(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	t.Cleanup(func() { cancel(); wg.Wait() })
	go func() {
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			c.Do(ctx, "SET", fmt.Sprintf("k%d", i%1000), "v")
		}
	}()
}
