package cli

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"redline/internal/labdata"
	"redline/internal/testutil"
)

// hostWideWatched are host-wide values a default lab's tuned variant
// would change on a host without a namespace for its server.
var hostWideWatched = []string{
	"/proc/sys/vm/overcommit_memory",
	"/proc/sys/net/core/somaxconn",
	"/proc/sys/net/ipv4/ip_local_port_range",
	"/proc/sys/net/ipv4/tcp_max_syn_backlog",
	"/sys/kernel/mm/transparent_hugepage/enabled",
}

// TestLabDefaultLeavesAnotherServersHost runs the default lab (one round,
// its server in a network namespace)
// while another redis-server listens on 6379, reads the host-wide values
// all along, and wants none of them changed at any time, the refusal said,
// and "host restored" as the last line.
func TestLabDefaultLeavesAnotherServersHost(t *testing.T) {
	testutil.NeedRoot(t)
	testutil.HostState(t)
	testutil.NeedTools(t, "redis-server", "redis-benchmark")
	other := exec.Command("redis-server", "--port", "6379", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	waitListening(t, "127.0.0.1:6379")

	start := readValues()
	changed := map[string]string{}
	var mu sync.Mutex
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // polls until the lab has ended
		defer wg.Done()
		for ctx.Err() == nil {
			for k, v := range readValues() {
				if v != start[k] {
					mu.Lock()
					changed[k] = start[k] + " -> " + v
					mu.Unlock()
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	dir := t.TempDir()
	stdout, stderr, code := runCLI(t, context.Background(), nil, "lab", "--repetitions", "1",
		"--out", filepath.Join(dir, "out"), "--state-dir", filepath.Join(dir, "state"), "--progress", "plain")
	stop()
	wg.Wait()
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for k, v := range changed {
		t.Errorf("%s changed during the lab: %s", k, v)
	}
	// The server has a namespace of its own, so the net-sysctl profile
	// stays there; what the doctor's fixes would change host-wide (on
	// most hosts vm.overcommit_memory) is listed and refused.
	if strings.Contains(stderr, "host-wide changes of the variants") && !strings.Contains(stderr, "host-wide changes refused:") {
		t.Errorf("the lab did not say it refused the host-wide changes:\n%s", stderr)
	}
	if res, err := labdata.ReadResult(filepath.Join(dir, "out", "result.json")); err != nil || res.Target.Kind != "netns" {
		t.Errorf("the default lab's server ran outside a namespace of its own (root here): %v", err)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "host restored") {
		t.Errorf("last line %q, want host restored:\n%s", last, stdout)
	}
}

func readValues() map[string]string {
	out := map[string]string{}
	for _, p := range hostWideWatched {
		if b, err := os.ReadFile(p); err == nil {
			out[p] = strings.Join(strings.Fields(string(b)), " ")
		}
	}
	return out
}

// waitListening waits until addr accepts a connection.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if i == 500 {
			t.Fatalf("%s: %v", addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
