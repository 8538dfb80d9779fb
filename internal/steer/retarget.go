package steer

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"redline/internal/host"
)

// feed runs a Source and hands over its periods; it can be swapped for a
// new Source when the target changes.
type feed struct {
	src       Source
	owned     bool // made by Run (NewSource): closed by it
	zeroBased func(dev string) bool
	period    time.Duration
	periods   chan *Period
	errc      chan error
	cancel    context.CancelFunc
	// before sums the stats of the sources swapped out.
	before SamplerStats
}

func (f *feed) start(ctx context.Context, s Source, pids []int, owned bool) {
	f.src, f.owned = s, owned
	s.Configure(targetSet(pids), f.zeroBased)
	f.periods, f.errc = make(chan *Period, 1), make(chan error, 1)
	sctx, cancel := context.WithCancel(ctx)
	f.cancel = cancel
	go func() { f.errc <- s.Run(sctx, f.period, f.periods) }()
}

// stop ends the running source (closing it if Run made it).
func (f *feed) stop() {
	f.cancel()
	<-f.errc
	if c, ok := f.src.(io.Closer); ok && f.owned {
		c.Close()
	}
}

// stats are the sampler's counts over every source so far.
func (f *feed) stats() SamplerStats {
	s := f.src.Stats()
	return SamplerStats{Events: f.before.Events + s.Events, Lost: f.before.Lost + s.Lost,
		Bad: f.before.Bad + s.Bad, CPU: f.before.CPU + s.CPU}
}

func targetSet(pids []int) map[uint32]bool {
	if len(pids) == 0 {
		return nil
	}
	m := map[uint32]bool{}
	for _, p := range pids {
		m[uint32(p)] = true
	}
	return m
}

// targetGone says whether a process steered for has exited (a
// restarting redis-server): then the host is read again at once.
func (st *runState) targetGone(readFile func(string) ([]byte, error)) bool {
	if readFile == nil {
		return false
	}
	for _, pid := range st.pids {
		if _, err := readFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil {
			return true
		}
	}
	return false
}

// retarget follows the target to its new pids (Config.Targets on the
// fresh snapshot): the Joiner's target, Redis's cores and, with
// NewSource, the kernel's thread filter change. It returns what to say.
func (st *runState) retarget(ctx context.Context, c Config, f *feed) []string {
	if c.Targets == nil || st.snap == nil {
		return nil
	}
	pids, err := c.Targets(st.snap)
	if err != nil {
		if msg := fmt.Sprintf("target: %v; still steering for pid %v", err, st.pids); msg != st.missing {
			st.missing = msg
			return []string{msg}
		}
		return nil
	}
	st.missing = ""
	if slices.Equal(pids, st.pids) {
		return nil
	}
	old := st.pids
	if c.NewSource != nil {
		tids, err := TargetThreads(st.snap, pids)
		if err != nil {
			return []string{fmt.Sprintf("target now pid %v: %v; still steering for pid %v", pids, err, old)}
		}
		s, err := c.NewSource(tids)
		if err != nil {
			return []string{fmt.Sprintf("target now pid %v: sampler: %v; still steering for pid %v", pids, err, old)}
		}
		before := f.stats()
		f.stop()
		f.before = before
		f.start(ctx, s, pids, true)
	} else {
		f.src.Configure(targetSet(pids), f.zeroBased)
	}
	st.pids = pids
	st.redis = RedisCPUsOf(st.snap, pids)
	return []string{fmt.Sprintf("target restarted: now steering for pid %v (was %v)", pids, old)}
}

// PIDsOnPorts lists the processes of a snapshot listening on the ports
// (each port must have one), after the given pids.
func PIDsOnPorts(snap *host.Snapshot, pids, ports []int) ([]int, error) {
	out := slices.Clone(pids)
	for _, port := range ports {
		found := false
		for _, p := range snap.Processes {
			for _, l := range p.Listen {
				if l.Port == port && !slices.Contains(out, p.PID) {
					out, found = append(out, p.PID), true
				} else if l.Port == port {
					found = true
				}
			}
		}
		if !found {
			return nil, fmt.Errorf("no redis-server listens on port %d here (redline inspect lists them)", port)
		}
	}
	return out, nil
}
