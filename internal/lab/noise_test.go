package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// statLine builds a /proc/PID/stat line with the given state, utime,
// stime and processor.
func statLine(name, state, utime, stime, cpu string) string {
	f := make([]string, 50)
	for i := range f {
		f[i] = "0"
	}
	f[0], f[11], f[12], f[36] = state, utime, stime, cpu
	return "42 (" + name + ") " + strings.Join(f, " ") + "\n"
}

// TestNoiseProbeOnAFixtureTree: a server thread and a load thread that ran
// on CPU 1 are seen sharing it; the host's busy time beyond the two
// processes' is the outside load.
func TestNoiseProbeOnAFixtureTree(t *testing.T) {
	root := t.TempDir()
	write := func(path, s string) {
		p := filepath.Join(root, path)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/stat", "cpu  100 0 0 900 0 0 0 0 0 0\n")
	write("proc/7/stat", statLine("redis-server", "S", "10", "0", "1"))
	write("proc/7/task/7/stat", statLine("redis-server", "S", "10", "0", "1"))
	write("sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "2000000\n")
	p := &noiseProbe{root: root, serverPID: 7, clientPID: 8, lastTicks: map[string]uint64{}, serverCPUs: map[int]bool{}, clientCPUs: map[int]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
	p.start, _ = p.hostTicks()
	p.serverT, p.clientT = p.procTicks(7), p.procTicks(8)
	write("proc/8/stat", statLine("redline", "S", "0", "0", "1"))
	write("proc/8/task/8/stat", statLine("redline", "R", "5", "0", "1"))
	p.sampleOnce() // first sight of the server thread: not yet known to have run
	write("proc/7/task/7/stat", statLine("redis-server", "S", "40", "0", "1"))
	write("proc/8/task/8/stat", statLine("redline", "R", "9", "0", "1")) // 4 ticks: busy
	write("proc/8/task/9/stat", statLine("redline gc", "S", "1", "0", "0"))
	p.sampleOnce()
	// 200 ticks more in all, 150 of them busy: 40 by the server, 20 by the load.
	write("proc/stat", "cpu  250 0 0 950 0 0 0 0 0 0\n")
	write("proc/7/stat", statLine("redis-server", "S", "50", "0", "1"))
	write("proc/8/stat", statLine("redline", "S", "20", "0", "1"))
	close(p.done)
	n := p.finish()
	if want := 90.0 / 200; n.OutsideCPU != want {
		t.Errorf("outside %v, want %v", n.OutsideCPU, want)
	}
	if n.SharedCPU != 1 || len(n.ServerCPUs) != 1 || len(n.ClientCPUs) != 1 || n.ClientCPUs[0] != 1 || n.MHz != 2000 {
		t.Errorf("%+v", n)
	}
	if !strings.Contains(n.Noisy, "45% of the CPU went to other work") {
		t.Errorf("noisy %q", n.Noisy)
	}
}
