package host

import (
	"bufio"
	"os"
	"os/exec"
	"redline/internal/testutil"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"redline/internal/redistest"
)

func liveFS(t testing.TB) *FS {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads Linux /proc and /sys")
	}
	fs, err := NewFSWith(FSOptions{Root: "/", Record: true})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// A real redis-server, found by pid: its threads, listening port, limits
// and memory come out of the live snapshot.
func TestLiveRedisProcess(t *testing.T) {
	srv := redistest.Start(t, "io-threads 2", "io-threads-do-reads yes")
	redistest.Do(t, redistest.Client(t, srv), "PING") // one client connection
	fs := liveFS(t)
	s, err := Read(fs, Options{PIDs: []int{srv.Pid()}})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Process(srv.Pid())
	if p == nil {
		t.Fatalf("process %d not in the snapshot; errors %+v", srv.Pid(), s.Errors)
	}
	if p.Comm != "redis-server" || p.MainThread() == nil || p.MainThread().Role != "main" || p.MainThread().CPU == nil {
		t.Errorf("process %+v", p)
	}
	roles := map[string]int{}
	for _, th := range p.Threads {
		roles[th.Role]++
	}
	if roles["bio"] < 2 || roles["io"] != 1 {
		t.Errorf("thread roles %v: want the bio threads and one io thread (io-threads 2)", roles)
	}
	found := false
	for _, l := range p.Listen {
		found = found || (l.Port == srv.Port && l.Addr == "127.0.0.1")
	}
	if !found {
		t.Errorf("listening sockets %+v do not include 127.0.0.1:%d", p.Listen, srv.Port)
	}
	if !p.NetNSIsInspector || p.OpenFiles == nil || p.OpenFiles.Soft <= 0 || p.CPUsAllowed == nil || p.VmRSS == nil || len(p.NUMAPages) == 0 {
		t.Errorf("netns %v nofile %+v cpus %v rss %v pages %v", p.NetNSIsInspector, p.OpenFiles, p.CPUsAllowed, p.VmRSS, p.NUMAPages)
	}
	if len(p.Traffic) == 0 || p.Traffic[0].NIC != "lo" || p.Traffic[0].Connections < 1 {
		t.Errorf("traffic %+v: want the loopback client on lo", p.Traffic)
	}
	// The inspector's TCP summary counts the server's port.
	ok := false
	for _, ps := range s.Net.TCP.Ports {
		ok = ok || ps.Port == srv.Port
	}
	if !ok {
		t.Errorf("TCP summary ports %+v lack %d", s.Net.TCP.Ports, srv.Port)
	}
	// Auto-detection finds it too.
	auto, err := Read(liveFS(t), Options{})
	if err != nil || auto.Process(srv.Pid()) == nil {
		t.Errorf("auto-detection missed pid %d (%v)", srv.Pid(), err)
	}
}

// A process in its own network namespace: its net.* sysctls are read
// inside that namespace (setns on a locked thread), not from ours.
func TestLiveNetnsSysctls(t *testing.T) {
	testutil.NeedRoot(t)
	testutil.Need(t, "unshare")
	cmd := exec.Command("unshare", "--net", "sh", "-c", "echo 777 > /proc/sys/net/core/somaxconn && echo ready && exec sleep 60")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot create a network namespace here: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		t.Skipf("the namespace did not come up: %q %v", line, err)
	}
	fs := liveFS(t)
	s, err := Read(fs, Options{PIDs: []int{cmd.Process.Pid}})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Process(cmd.Process.Pid)
	if p == nil {
		t.Fatalf("no process; errors %+v", s.Errors)
	}
	if p.NetNSIsInspector || p.NetSysctls["net.core.somaxconn"] != "777" {
		t.Errorf("netns sysctls %v (own netns %v); ours is %s", p.NetSysctls, !p.NetNSIsInspector, s.Sysctls["net.core.somaxconn"])
	}
	if s.Sysctls["net.core.somaxconn"] == "777" {
		t.Error("the inspector's own somaxconn was changed: the test leaked out of its namespace")
	}
	// The capture keeps the namespace's answers: the tree gives them back.
	dir := t.TempDir() + "/tree"
	if _, err := Capture(fs, dir); err != nil {
		t.Fatal(err)
	}
	tree, err := NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Read(tree, Options{PIDs: []int{cmd.Process.Pid}})
	if q := again.Process(cmd.Process.Pid); q == nil || q.NetSysctls["net.core.somaxconn"] != "777" {
		t.Errorf("captured netns sysctls lost: %+v", q)
	}
}

// An unknown pid is an error in the snapshot, not a failure of Read.
func TestLiveUnknownPid(t *testing.T) {
	s, err := Read(liveFS(t), Options{PIDs: []int{1 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Processes) != 0 || len(s.Errors) == 0 || !strings.Contains(s.Errors[len(s.Errors)-1].Error, strconv.Itoa(1<<30)) {
		t.Errorf("processes %v errors %+v", s.Processes, s.Errors)
	}
}

// BenchmarkReadLive measures a whole snapshot of this machine, including
// /proc/interrupts, every IRQ's affinity and the processes scan (see
// docs/benchmarks.md). It also reports how many files a snapshot reads.
func BenchmarkReadLive(b *testing.B) {
	fs := liveFS(b)
	for i := 0; i < b.N; i++ {
		fs.mu.Lock()
		fs.log = nil // only the last read's accesses are counted below
		fs.mu.Unlock()
		if _, err := Read(fs, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	files := 0
	for _, a := range fs.Log() {
		if a.Kind == AccessFile {
			files++
		}
	}
	b.ReportMetric(float64(files), "files/op")
}

// BenchmarkReadKunpeng measures a snapshot of the 128-CPU fixture tree.
func BenchmarkReadKunpeng(b *testing.B) {
	for i := 0; i < b.N; i++ {
		readFixture(b, "kunpeng920-4node-hinic", Options{})
	}
}

// BenchmarkParseInterrupts128 parses the Kunpeng fixture's /proc/interrupts
// (128 CPU columns).
func BenchmarkParseInterrupts128(b *testing.B) {
	data, err := os.ReadFile(hostsDir + "/kunpeng920-4node-hinic/proc/interrupts")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		if _, err := parseInterrupts(data); err != nil {
			b.Fatal(err)
		}
	}
}
