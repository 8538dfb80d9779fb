package guard

import (
	"context"
	"errors"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"redline/internal/bench"
	"redline/internal/benchdata"
	"redline/internal/redisadmin"
)

// Probe defaults: one connection, PING at 100 a second, one INFO a tick.
// Their measured cost is in docs/benchmarks.md ("guard probe cost").
const (
	DefaultProbeRate = 100
	DefaultInterval  = time.Second
)

// ProbeCommand is what the probe sends: the server's cheapest command,
// which touches no key (no keyspace hits or misses in the owner's
// dashboards), so its time is the server's event loop and the network
// path the change may have moved.
var ProbeCommand = []string{"PING"}

// MonitorOptions say how to watch a server.
type MonitorOptions struct {
	Redis     redisadmin.Options
	ProbeRate float64       // PING a second; DefaultProbeRate when 0
	Interval  time.Duration // one tick; DefaultInterval when 0
}

func (o *MonitorOptions) defaults() {
	if o.ProbeRate <= 0 {
		o.ProbeRate = DefaultProbeRate
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
}

// Monitor runs the probe and reads INFO once a tick.
type Monitor struct {
	o      MonitorOptions
	admin  *redisadmin.Conn
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	hist     *hdr.Histogram // probe replies since the last tick
	requests int64
	probeErr error

	last Sample
	// Requests counts the probe's replies, INFOs the INFO reads: the
	// guard's own load on the server.
	Requests, INFOs int64
}

// StartMonitor connects, reads a first INFO and starts the probe.
func StartMonitor(ctx context.Context, o MonitorOptions) (*Monitor, error) {
	o.defaults()
	admin, err := redisadmin.Dial(ctx, o.Redis)
	if err != nil {
		return nil, err
	}
	m := &Monitor{o: o, admin: admin, done: make(chan struct{}), hist: newHist()}
	info, err := admin.Info(ctx)
	if err != nil {
		admin.Close()
		return nil, err
	}
	m.INFOs++
	m.last = SampleOf(info, time.Now())
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	go m.probe(pctx)
	return m, nil
}

func newHist() *hdr.Histogram { return hdr.New(1, int64(benchdata.MaxLatency), 2) }

func (m *Monitor) probe(ctx context.Context) {
	defer close(m.done)
	bo := bench.DefaultOptions()
	bo.Network, bo.Addr, bo.NetNS = m.o.Redis.Network, m.o.Redis.Addr, m.o.Redis.NetNS
	bo.User, bo.Password = m.o.Redis.Username, m.o.Redis.Password
	bo.Clients, bo.Requests, bo.Duration = 1, 0, 100*365*24*time.Hour
	bo.Rate = m.o.ProbeRate
	bo.ProgressInterval = max(m.o.Interval/4, 10*time.Millisecond)
	bo.Progress = func(p bench.Progress) {
		if p.Interval == nil || p.Warmup {
			return
		}
		m.mu.Lock()
		m.hist.Merge(p.Interval.Histogram)
		m.requests += p.IntervalRequests
		m.mu.Unlock()
	}
	_, err := bench.Run(ctx, bo, bench.CustomTest(ProbeCommand), nil)
	if ctx.Err() == nil {
		if err == nil {
			err = errors.New("the probe ended")
		}
		m.mu.Lock()
		m.probeErr = err
		m.mu.Unlock()
	}
}

// Expected is how many probe replies a second the server should give.
func (m *Monitor) Expected() float64 { return m.o.ProbeRate }

// Interval is one tick.
func (m *Monitor) Interval() time.Duration { return m.o.Interval }

// Tick reads INFO and takes the probe's replies since the last tick. An
// INFO that fails gives a tick with no probe replies (a server that does
// not answer is as slow as it gets) and the error.
func (m *Monitor) Tick(ctx context.Context) (Tick, Sample, error) {
	m.mu.Lock()
	h, n, perr := m.hist, m.requests, m.probeErr
	m.hist, m.requests = newHist(), 0
	m.Requests += n
	m.mu.Unlock()
	p99 := float64(h.ValueAtQuantile(99)) / 1e6
	info, err := m.info(ctx)
	if err != nil {
		// the counters of a server that does not answer are unknown; its
		// probe is starved on purpose, so the latency rule sees it
		return Tick{Seconds: m.o.Interval.Seconds()}, m.last, err
	}
	m.INFOs++
	s := SampleOf(info, time.Now())
	t := TickOf(m.last, s, n, p99)
	m.last = s
	return t, s, perr
}

// info reads INFO, dialling again after a failure (a restarted server).
func (m *Monitor) info(ctx context.Context) (*redisadmin.Info, error) {
	if m.admin == nil {
		c, err := redisadmin.Dial(ctx, m.o.Redis)
		if err != nil {
			return nil, err
		}
		m.admin = c
	}
	info, err := m.admin.Info(ctx)
	if err != nil {
		m.admin.Close()
		m.admin = nil
	}
	return info, err
}

// Close stops the probe and closes the connection.
func (m *Monitor) Close() {
	m.cancel()
	<-m.done
	if m.admin != nil {
		m.admin.Close()
	}
}
