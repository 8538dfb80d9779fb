package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"redline/internal/host"
	"redline/internal/labdata"
)

// The noise of a run: how much of the host's CPU went to neither the server
// nor redline (the load generator), how much the hypervisor stole, the CPU
// frequency, and which CPUs the server's and the load's threads ran on.
// These small readers belong with internal/host's (one file per kernel
// source); they live here until the lab can use a host reader for a
// process's threads.

// Thresholds above which a run is flagged as noisy.
const (
	NoisyOutside = 0.10 // of the host's CPU time
	NoisySteal   = 0.05
	// sharedCPU is the share of samples above which the server and the
	// load are said to have shared a CPU.
	sharedCPU      = 0.5
	sampleInterval = 100 * time.Millisecond
	// busyTicks is the CPU time (in 10 ms ticks) a thread must have used
	// since the last sample to count as busy there: a third of the
	// interval. Idle helpers (the Go runtime's, redis's bio threads) that
	// wake now and then on any CPU are not the load or the server at work.
	busyTicks = 3
)

// noiseProbe reads the noise of one run from a /proc and /sys tree.
type noiseProbe struct {
	root      string // "/" on a live host
	serverPID int
	clientPID int

	start            host.CPUTime
	serverT, clientT uint64
	began            time.Time

	mu                sync.Mutex
	lastTicks         map[string]uint64
	serverCPUs        map[int]bool
	clientCPUs        map[int]bool
	samples, together int
	stop              chan struct{}
	done              chan struct{}
}

func (p *noiseProbe) path(elem ...string) string {
	return filepath.Join(append([]string{p.root}, elem...)...)
}

// hostTicks is /proc/stat's all-CPU line.
func (p *noiseProbe) hostTicks() (host.CPUTime, error) {
	b, err := os.ReadFile(p.path("proc", "stat"))
	if err != nil {
		return host.CPUTime{}, err
	}
	total, _, err := host.ParseCPUTimes(b)
	if err == nil && total.Total() == 0 {
		err = errors.New("/proc/stat has no cpu total line")
	}
	return total, err
}

func (p *noiseProbe) procTicks(pid int) uint64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(p.path("proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	t, err := host.ParseTaskStat(b)
	if err != nil {
		return 0
	}
	return t.UTime + t.STime
}

// startNoise begins a run's probe; the caller ends it with finish. It
// returns nil where /proc cannot be read.
func startNoise(root string, serverPID int) *noiseProbe {
	p := &noiseProbe{root: root, serverPID: serverPID, clientPID: os.Getpid(), began: time.Now(),
		lastTicks: map[string]uint64{}, serverCPUs: map[int]bool{}, clientCPUs: map[int]bool{},
		stop: make(chan struct{}), done: make(chan struct{})}
	var err error
	if p.start, err = p.hostTicks(); err != nil {
		return nil
	}
	p.serverT, p.clientT = p.procTicks(serverPID), p.procTicks(p.clientPID)
	go p.sample()
	return p
}

func (p *noiseProbe) sample() {
	defer close(p.done)
	t := time.NewTicker(sampleInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.sampleOnce()
		}
	}
}

// sampleOnce notes the CPU of every thread of the server and of the load
// that ran since the last sample, and whether one of each ran on the same
// CPU.
func (p *noiseProbe) sampleOnce() {
	p.mu.Lock()
	defer p.mu.Unlock()
	srv := p.busyCPUs("s", p.serverPID)
	cli := p.busyCPUs("c", p.clientPID)
	for c := range srv {
		p.serverCPUs[c] = true
	}
	for c := range cli {
		p.clientCPUs[c] = true
	}
	if len(srv) == 0 || len(cli) == 0 {
		return
	}
	p.samples++
	for c := range srv {
		if cli[c] {
			p.together++
			return
		}
	}
}

// busyCPUs returns the CPUs of pid's threads that were busy (busyTicks or
// more) since the last sample.
func (p *noiseProbe) busyCPUs(tag string, pid int) map[int]bool {
	out := map[int]bool{}
	if pid <= 0 {
		return out
	}
	dir := p.path("proc", strconv.Itoa(pid), "task")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "stat"))
		if err != nil {
			continue
		}
		t, err := host.ParseTaskStat(b)
		if err != nil {
			continue
		}
		key, ticks := tag+e.Name(), t.UTime+t.STime
		if last, seen := p.lastTicks[key]; seen && ticks >= last+busyTicks {
			out[t.CPU] = true
		}
		p.lastTicks[key] = ticks
	}
	return out
}

// finish ends the probe and returns the run's noise.
func (p *noiseProbe) finish() *labdata.Noise {
	if p == nil {
		return nil
	}
	close(p.stop)
	<-p.done
	end, err := p.hostTicks()
	if err != nil {
		return nil
	}
	n := &labdata.Noise{}
	total := float64(end.Total() - p.start.Total())
	if total > 0 {
		srv := float64(p.procTicks(p.serverPID) - p.serverT)
		cli := float64(p.procTicks(p.clientPID) - p.clientT)
		n.OutsideCPU = max(float64(end.Busy()-p.start.Busy())-srv-cli, 0) / total
		n.Steal = float64(end.Steal-p.start.Steal) / total
	}
	n.MHz = p.meanMHz()
	p.mu.Lock()
	n.ServerCPUs, n.ClientCPUs = sortedKeys(p.serverCPUs), sortedKeys(p.clientCPUs)
	if p.samples > 0 {
		n.SharedCPU = float64(p.together) / float64(p.samples)
	}
	p.mu.Unlock()
	n.Noisy = noisy(n)
	return n
}

// noisy says why a run is flagged, "" when it is not.
func noisy(n *labdata.Noise) string {
	var why []string
	if n.OutsideCPU > NoisyOutside {
		why = append(why, fmt.Sprintf("%.0f%% of the CPU went to other work", 100*n.OutsideCPU))
	}
	if n.Steal > NoisySteal {
		why = append(why, fmt.Sprintf("%.0f%% stolen by the hypervisor", 100*n.Steal))
	}
	return strings.Join(why, ", ")
}

// meanMHz averages scaling_cur_freq over the CPUs that have one, 0 when
// none is readable (most VMs).
func (p *noiseProbe) meanMHz() float64 {
	files, _ := filepath.Glob(p.path("sys", "devices", "system", "cpu", "cpu[0-9]*", "cpufreq", "scaling_cur_freq"))
	sum, n := 0.0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if khz, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64); err == nil && khz > 0 {
			sum, n = sum+khz/1000, n+1
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
