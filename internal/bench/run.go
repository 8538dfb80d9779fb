package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"redline/internal/benchdata"
	"redline/internal/resp"
)

// Progress is a live view of a running test, passed to Options.Progress.
type Progress struct {
	Title    string
	Warmup   bool
	Elapsed  time.Duration // since measurement started
	Requests int64         // measured requests completed so far
	// Interval figures cover exactly the replies since the previous call
	// (the first call: since the test started).
	IntervalRequests int64
	IntervalRPS      float64
	IntervalAvg      float64 // ms
	IntervalP99      float64 // ms
	IntervalMax      float64 // ms
	// Interval is the interval's latency histogram (2 significant
	// figures), for merging the ticks of --workers exactly.
	Interval   *benchdata.Histogram `json:"-"`
	OverallRPS float64
	// Final marks the call after the test ended (Options.ProgressFinal).
	Final bool
}

// eventLoop is one unit of the load: an epoll worker, or a group of TLS
// connections.
type eventLoop interface {
	run(ready chan<- error, start <-chan struct{}) error
	close()
	recorder() *recorder
}

// runner is the state shared by the workers of one test.
type runner struct {
	o        *Options
	test     Test
	origin   time.Time
	target   string
	domain   int
	sockaddr unix.Sockaddr

	prefix      []byte
	prefixCount int
	prefixNames []string
	cmdNames    []string

	loops []eventLoop

	cluster  *clusterRun  // --cluster
	sentinel *sentinelRun // --sentinel
	// measureStart is measureFrom for the loops (failover.go's seconds).
	measureStart atomic.Int64

	budget    atomic.Int64
	started   atomic.Bool
	measuring atomic.Bool
	stopIssue atomic.Bool
	abort     atomic.Bool

	mu          sync.Mutex
	err         error
	interrupted bool
	abortedAt   int64
	measureFrom int64
	setupTime   time.Duration // from the first connect to all connections ready
	kernel      *benchdata.NetEvidence
}

func (r *runner) now() int64 { return int64(time.Since(r.origin)) }

// claim takes up to k requests from the budget; 0 means stop sending.
// Warm-up requests are not counted against it.
func (r *runner) claim(k int) int {
	if r.stopIssue.Load() || r.abort.Load() {
		return 0
	}
	if !r.measuring.Load() {
		return k
	}
	for {
		cur := r.budget.Load()
		if cur <= 0 {
			return 0
		}
		take := min(int64(k), cur)
		if r.budget.CompareAndSwap(cur, cur-take) {
			return int(take)
		}
	}
}

// claimDue takes one open-loop request due at due: one due before end
// (the loop's end of --duration; 0: none) is still sent after it.
func (r *runner) claimDue(due, end int64) bool {
	if !r.dueOpen(due, end) {
		return false
	}
	if !r.measuring.Load() {
		return true
	}
	return r.budget.Add(-1) >= 0
}

// dueOpen reports whether an open-loop request due at due is to be sent.
func (r *runner) dueOpen(due, end int64) bool {
	if r.abort.Load() {
		return false
	}
	if end > 0 && due >= end {
		return false
	}
	return !r.measuring.Load() || r.budget.Load() > 0
}

// issuingOpen reports whether more requests may still be sent.
func (r *runner) issuingOpen() bool {
	return !r.stopIssue.Load() && !r.abort.Load() && (!r.measuring.Load() || r.budget.Load() > 0)
}

func (r *runner) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
		r.abortedAt = r.now()
	}
	r.mu.Unlock()
	r.abort.Store(true)
}

// Run runs one test and returns what it measured. data holds the value
// bytes for __data__; when it is shorter than the largest value size,
// redis-benchmark's payload is used. When the run fails or is
// interrupted after measuring started, the Summary holds the partial
// results and has Error or Interrupted set, and the error is returned too.
func Run(ctx context.Context, o Options, t Test, data []byte) (*benchdata.Summary, error) {
	if o.Sentinel != "" {
		o.Reconnect = true
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if t.Source == nil && len(t.SourceSpec) > 0 {
		if SourceFactory == nil {
			return nil, fmt.Errorf("this process cannot generate workload-file requests (no SourceFactory)")
		}
		src, err := SourceFactory(t.SourceSpec)
		if err != nil {
			return nil, err
		}
		t.Source = src
	}
	if t.Grouped && (o.TLS != nil || o.ConnectRate > 0) {
		return nil, fmt.Errorf("a workload whose requests take several replies (MULTI/EXEC groups, a preload with TTLs or streams) runs without --tls and --connect-rate for now")
	}
	if o.TLS != nil && (o.Rate > 0 || !o.KeepAlive || o.ConnectRate > 0) {
		return nil, fmt.Errorf("--rate, --connect-rate and -k 0 are not supported with --tls yet")
	}
	r := &runner{o: &o, test: t, origin: time.Now()}
	if o.Sentinel != "" {
		if err := r.prepareSentinel(ctx); err != nil {
			return nil, err
		}
	}
	if err := r.resolve(); err != nil {
		return nil, err
	}
	r.buildPrefix()
	if o.Cluster {
		if err := r.prepareCluster(ctx); err != nil {
			return nil, err
		}
	}
	if o.TLS == nil {
		if err := ensureFiles(r.connsFor(o.Clients), o.threads()); err != nil {
			return nil, err
		}
	}
	gens, err := r.generators(data)
	if err != nil {
		return nil, err
	}
	if o.Requests > 0 {
		r.budget.Store(o.Requests)
	} else {
		r.budget.Store(math.MaxInt64)
	}
	if err := r.makeWorkers(gens); err != nil {
		return nil, err
	}
	if o.TLS == nil {
		defer procsFor(len(r.loops))()
	}
	if r.cluster != nil {
		defer r.cluster.startRefresher(r.o)()
	}
	if r.sentinel != nil {
		defer r.sentinel.start()()
	}
	defer func() {
		for _, l := range r.loops {
			l.close()
		}
	}()
	return r.execute(ctx)
}

func (r *runner) resolve() error {
	if r.o.Network == "unix" {
		r.domain, r.sockaddr, r.target = unix.AF_UNIX, &unix.SockaddrUnix{Name: r.o.Addr}, r.o.Addr
		return nil
	}
	r.target = r.o.Addr
	a, err := net.ResolveTCPAddr("tcp", r.o.Addr)
	if err != nil {
		return fmt.Errorf("Could not resolve %s: %w", r.o.Addr, err)
	}
	if ip4 := a.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: a.Port}
		copy(sa.Addr[:], ip4)
		r.domain, r.sockaddr = unix.AF_INET, sa
		return nil
	}
	sa := &unix.SockaddrInet6{Port: a.Port}
	copy(sa.Addr[:], a.IP.To16())
	if a.Zone != "" {
		if ifi, err := net.InterfaceByName(a.Zone); err == nil {
			sa.ZoneId = uint32(ifi.Index)
		}
	}
	r.domain, r.sockaddr = unix.AF_INET6, sa
	return nil
}

// buildPrefix prepares the commands every connection sends first, in
// redis-benchmark's order; their replies are checked and dropped.
func (r *runner) buildPrefix() {
	add := func(name string, args ...string) {
		r.prefix = resp.AppendCommand(r.prefix, args...)
		r.prefixNames = append(r.prefixNames, name)
	}
	switch {
	case r.o.Password != "" && r.o.User != "":
		add("AUTH", "AUTH", r.o.User, r.o.Password)
	case r.o.Password != "":
		add("AUTH", "AUTH", r.o.Password)
	}
	if r.o.Tracking {
		add("CLIENT TRACKING", "CLIENT", "TRACKING", "on")
	}
	if r.o.DB != 0 {
		add("SELECT", "SELECT", fmt.Sprint(r.o.DB))
	}
	if r.o.RESP3 {
		add("HELLO 3", "HELLO", "3")
	}
	r.prefixCount = len(r.prefixNames)
}

// generators compiles the test once per worker, each with its own random
// source.
func (r *runner) generators(data []byte) ([]generator, error) {
	parts := r.test.Mix
	if len(parts) == 0 {
		parts = []MixPart{{Name: r.test.Title, Args: r.test.Args, Weight: 1}}
	}
	if len(parts) > 255 {
		return nil, fmt.Errorf("a mix can hold at most 255 commands, got %d", len(parts))
	}
	if len(data) < r.o.Sizes.Largest() {
		data = NewPayload().Next(r.o.Sizes.Largest())
	}
	var fixed []byte
	if r.o.Sizes.Fixed() {
		fixed = data[:r.o.Sizes.Min]
	}
	var cmds []command
	var weights []int
	for _, p := range parts {
		c, err := compile(p.Args, r.test.Inline, r.o.Keys.Space > 0, fixed)
		if err != nil {
			return nil, fmt.Errorf("command %q: %w", strings.Join(p.Args, " "), err)
		}
		cmds = append(cmds, c)
		weights = append(weights, max(p.Weight, 1))
		r.cmdNames = append(r.cmdNames, p.Name)
	}
	seq := new(atomic.Uint64)
	keys := r.o.Keys
	keys.Sequence = seq
	seed := r.o.Seed
	var gens []generator
	for i := range r.o.threads() {
		ks, err := newKeySource(keys)
		if err != nil {
			return nil, err
		}
		g := generator{cmds: cmds, keys: ks, sizes: newSizeSource(r.o.Sizes), data: data,
			rng: newRand(seed, uint64(i)+1)}
		if r.test.Source != nil {
			g.src = r.test.Source(newRand(seed, uint64(i)+1<<32))
		}
		if len(cmds) > 1 {
			g.schedule = mixSchedule(weights)
			g.step = i % len(g.schedule)
		}
		gens = append(gens, g)
	}
	return gens, nil
}

func (r *runner) makeWorkers(gens []generator) error {
	n := len(gens)
	for i, g := range gens {
		share := r.o.Clients / n
		if i < r.o.Clients%n {
			share++
		}
		if r.o.TLS != nil {
			r.loops = append(r.loops, newTLSGroup(r, i, share, g))
			continue
		}
		if r.o.ConnectRate > 0 {
			if err := r.addChurnLoop(i, share, g); err != nil {
				return err
			}
			continue
		}
		w, err := newWorker(r, i, r.connsFor(share), g)
		if err != nil {
			for _, l := range r.loops {
				l.close()
			}
			return err
		}
		if r.cluster != nil {
			r.attachCluster(w, share)
		}
		r.loops = append(r.loops, w)
	}
	return nil
}

// sockaddrCopy returns a private copy of the target address.
func (r *runner) sockaddrCopy() unix.Sockaddr {
	switch sa := r.sockaddr.(type) {
	case *unix.SockaddrInet4:
		c := &unix.SockaddrInet4{Port: sa.Port, Addr: sa.Addr}
		return c
	case *unix.SockaddrInet6:
		return &unix.SockaddrInet6{Port: sa.Port, ZoneId: sa.ZoneId, Addr: sa.Addr}
	case *unix.SockaddrUnix:
		return &unix.SockaddrUnix{Name: sa.Name}
	}
	return r.sockaddr
}

func newRand(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

// execute connects everything, measures and summarises.
func (r *runner) execute(ctx context.Context) (*benchdata.Summary, error) {
	ready := make(chan error, len(r.loops))
	start := make(chan struct{})
	done := make(chan error, len(r.loops))
	probe := r.startNetProbe()
	setupFrom := r.now()
	for _, l := range r.loops {
		go func() { done <- l.run(ready, start) }()
	}
	if err := r.awaitReady(ctx, ready); err != nil {
		r.abort.Store(true)
		close(start)
		r.drain(done)
		return nil, err
	}
	r.setupTime = time.Duration(r.now() - setupFrom)
	if err := r.gate(ctx); err != nil {
		r.abort.Store(true)
		close(start)
		r.drain(done)
		return nil, err
	}
	r.started.Store(true)
	r.measuring.Store(r.o.Warmup == 0)
	r.measureFrom = r.now()
	r.measureStart.Store(r.measureFrom)
	close(start)
	stopTimers := r.schedule(ctx)
	r.watch(ctx, done)
	stopTimers()
	r.kernel = probe.finish() // before the loops close their connections
	return r.summarise()
}

// gate holds the start until Options.Ready returns.
func (r *runner) gate(ctx context.Context) error {
	if r.o.Ready == nil {
		return nil
	}
	return r.o.Ready(ctx)
}

func (r *runner) awaitReady(ctx context.Context, ready <-chan error) error {
	for range r.loops {
		select {
		case err := <-ready:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return fmt.Errorf("interrupted while connecting: %w", ctx.Err())
		}
	}
	return nil
}

func (r *runner) drain(done <-chan error) {
	for range r.loops {
		<-done
	}
}

// schedule arms the warm-up and duration timers.
func (r *runner) schedule(ctx context.Context) func() {
	var timers []*time.Timer
	if r.o.Warmup > 0 {
		timers = append(timers, time.AfterFunc(r.o.Warmup, func() {
			r.mu.Lock()
			r.measureFrom = r.now()
			r.measureStart.Store(r.measureFrom)
			r.mu.Unlock()
			r.measuring.Store(true)
		}))
	}
	if r.o.Duration > 0 {
		timers = append(timers, time.AfterFunc(r.o.Warmup+r.o.Duration, func() { r.stopIssue.Store(true) }))
	}
	return func() {
		for _, t := range timers {
			t.Stop()
		}
	}
}

// watch waits for the workers, reporting progress and handling Ctrl-C.
func (r *runner) watch(ctx context.Context, done <-chan error) {
	interval := r.o.ProgressInterval
	if interval <= 0 {
		interval = 250 * time.Millisecond
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	p := progressState{last: r.now()}
	remaining := len(r.loops)
	ctxDone := ctx.Done()
	for remaining > 0 {
		select {
		case err := <-done:
			remaining--
			if err != nil {
				r.fail(err)
			}
		case <-ctxDone:
			ctxDone = nil
			r.mu.Lock()
			r.interrupted = true
			r.abortedAt = r.now()
			r.mu.Unlock()
			r.abort.Store(true)
		case <-tick.C:
			if r.o.Progress != nil {
				r.o.Progress(r.progress(&p))
			}
		}
	}
	if r.o.Progress != nil && r.o.ProgressFinal {
		pr := r.progress(&p)
		pr.Final = true
		r.o.Progress(pr)
	}
}

type progressState struct {
	last     int64
	lastDone int64
}

func (r *runner) progress(p *progressState) Progress {
	now := r.now()
	var done int64
	tick := hdr.New(1, int64(benchdata.MaxLatency), tickPrecision)
	for _, l := range r.loops {
		h, n := l.recorder().snapshot()
		tick.Merge(h)
		done += n
	}
	r.mu.Lock()
	from := r.measureFrom
	r.mu.Unlock()
	dt := float64(now-p.last) / 1e9
	pr := Progress{
		Title:            r.test.Title,
		Warmup:           !r.measuring.Load(),
		Elapsed:          time.Duration(now - from),
		Requests:         done,
		IntervalRequests: done - p.lastDone,
		IntervalRPS:      float64(done-p.lastDone) / dt,
		IntervalAvg:      tick.Mean() / 1e6,
		IntervalP99:      float64(tick.ValueAtPercentile(99)) / 1e6,
		IntervalMax:      float64(tick.Max()) / 1e6,
		Interval:         &benchdata.Histogram{Histogram: tick},
	}
	if el := float64(now-from) / 1e9; el > 0 && !pr.Warmup {
		pr.OverallRPS = float64(done) / el
	}
	p.last, p.lastDone = now, done
	return pr
}

// summarise merges the loops' measurements into a Summary, with the
// merge of a --workers run's Summaries (addCounts, mergeConnections,
// digest): each loop's part is what a worker's Summary would carry. Start
// and End are the origin plus the offsets: measureFrom already counts the
// set-up and the wait for Options.Ready, so adding it to a later instant
// would count that time twice and make workers' intervals differ by their
// set-up (MergeWorkers takes earliest start to latest end).
func (r *runner) summarise() (*benchdata.Summary, error) {
	r.mu.Lock()
	from, err, interrupted, abortedAt := r.measureFrom, r.err, r.interrupted, r.abortedAt
	r.mu.Unlock()
	var last, drainFrom int64
	for _, l := range r.loops {
		rec := l.recorder()
		last = max(last, rec.last)
		drainFrom = max(drainFrom, rec.end)
	}
	end := last
	if err != nil || interrupted || end < from {
		end = max(abortedAt, last)
	}
	elapsed := time.Duration(max(end-from, 0))
	s := &benchdata.Summary{
		Schema:         benchdata.SchemaVersion,
		Title:          r.test.Title,
		Command:        r.commandText(),
		Start:          r.origin.Add(time.Duration(from)),
		End:            r.origin.Add(time.Duration(end)),
		ElapsedSeconds: elapsed.Seconds(),
		Interrupted:    interrupted,
		Config:         r.runConfig(),
	}
	for _, l := range r.loops {
		p := r.loopPart(l.recorder())
		addCounts(s, p)
		s.Connections = mergeConnections(s.Connections, p.Connections)
	}
	if len(r.loops) == 0 { // nothing measured
		s.Histogram, s.Connections = benchdata.NewHistogram(r.o.Precision), &benchdata.Connections{}
	}
	digest(s)
	s.Connections.SetupSeconds = r.setupTime.Seconds()
	if elapsed > 0 && (!r.o.KeepAlive || r.o.ConnectRate > 0) {
		s.Connections.PerSecond = float64(s.Connections.Opened) / elapsed.Seconds()
	}
	explain(r.kernel, s.Connections)
	if drainFrom > 0 {
		s.Drain.LimitSeconds = r.o.Drain.Seconds()
		s.Drain.Seconds = time.Duration(max(last-drainFrom, 0)).Seconds()
	} else {
		s.Drain = nil
	}
	if s.Cluster != nil {
		s.Cluster.Refreshes = r.cluster.refreshes.Load()
	}
	if r.o.Reconnect {
		var recs []*failRec
		for _, l := range r.loops {
			recs = append(recs, l.recorder().fo)
		}
		s.Failover = r.failover(recs, from)
	}
	if err != nil {
		s.Error = err.Error()
		s.Errors++
		return s, err
	}
	if interrupted {
		return s, ErrInterrupted
	}
	return s, nil
}

// loopPart is one loop's measurements as the counts of a Summary
// (addCounts): its histograms (per command when there are several, and
// per cluster node), drain and connection set-up. Its Config is left
// zero: the run's is the runner's.
func (r *runner) loopPart(rec *recorder) *benchdata.Summary {
	p := &benchdata.Summary{
		Histogram: unionOf(rec.hists), UncorrectedHistogram: unionOf(rec.unc), Drain: &rec.drain,
		Connections: &benchdata.Connections{Opened: rec.connect.TotalCount(), Retries: rec.retries, Failures: rec.failures,
			ConnectHistogram: &benchdata.Histogram{Histogram: rec.connect}, ReadyHistogram: &benchdata.Histogram{Histogram: rec.ready}},
	}
	p.Requests = p.Histogram.TotalCount()
	if len(rec.hists) > 1 {
		for i, h := range rec.hists {
			p.Commands = append(p.Commands, benchdata.CommandResult{Name: r.cmdNames[i], Requests: h.TotalCount(), Histogram: &benchdata.Histogram{Histogram: h}})
		}
	}
	if r.cluster != nil {
		p.Cluster = r.clusterPart(rec.cluster)
	}
	if rec.fo != nil {
		p.Errors, p.ErrorsByType = rec.fo.requests, kindMap(rec.fo.byKind)
	}
	return p
}

// unionOf is one histogram of hs' values (hs[0] itself when alone; nil
// when none).
func unionOf(hs []*hdr.Histogram) *benchdata.Histogram {
	switch len(hs) {
	case 0:
		return nil
	case 1:
		return &benchdata.Histogram{Histogram: hs[0]}
	}
	u := benchdata.NewHistogram(int(hs[0].SignificantFigures()))
	for _, h := range hs {
		u.Merge(h)
	}
	return u
}

// ErrInterrupted is returned with the partial Summary when the context was
// cancelled (Ctrl-C) during the measurement.
var ErrInterrupted = errors.New("interrupted")

func (r *runner) commandText() string {
	if len(r.test.Mix) == 0 {
		return strings.Join(r.test.Args, " ")
	}
	var parts []string
	for _, p := range r.test.Mix {
		parts = append(parts, fmt.Sprintf("%d x %s", p.Weight, strings.Join(p.Args, " ")))
	}
	return strings.Join(parts, " | ")
}

// keptAlive is redis-benchmark's "keep alive" for o: whether a connection
// carries more than one batch. --connect-rate closes each connection after
// its one request, as -k 0 does, so it is not.
func keptAlive(o *Options) bool { return o.KeepAlive && o.ConnectRate == 0 }

func (r *runner) runConfig() benchdata.RunConfig {
	o := r.o
	c := benchdata.RunConfig{
		Target: o.Network + "://" + r.target, TLS: o.TLS != nil, Clients: o.Clients, Requests: o.Requests,
		DurationSec: o.Duration.Seconds(), WarmupSec: o.Warmup.Seconds(), Pipeline: o.Pipeline,
		Threads: len(r.loops), KeepAlive: keptAlive(o), KeySpace: o.Keys.Space, Rate: o.Rate,
		DB: o.DB, RESP3: o.RESP3, Precision: o.Precision, Seed: o.Seed, PayloadBytes: o.Sizes.Min,
		ConnectRate: o.ConnectRate,
	}
	if o.Keys.Space > 0 {
		c.KeyDist = string(o.Keys.Dist)
		if c.KeyDist == "" {
			c.KeyDist = string(KeyUniform)
		}
	}
	if !o.Sizes.Fixed() {
		c.ValueSizes = o.Sizes.String()
	}
	return c
}
