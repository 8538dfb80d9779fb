package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"redline/internal/benchdata"
)

// Shares splits a total over n workers as evenly as integers allow: the
// first total%n get one more.
func Shares(total int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = total / int64(n)
		if int64(i) < total%int64(n) {
			out[i]++
		}
	}
	return out
}

// WorkerSpec is what one worker of a --workers run is told, by a local
// process's stdin or a remote session's bench op: its share of the
// options, the test and the payload. The password travels in it, never
// on a command line.
type WorkerSpec struct {
	Options Options `json:"options"`
	Test    Test    `json:"test"`
	Data    []byte  `json:"data"`
	// Ticks asks the worker to keep its progress intervals (every
	// Options.ProgressInterval) and return them with its result.
	Ticks bool `json:"ticks,omitempty"`
}

// CheckWorkers refuses what n workers cannot share: fewer clients or
// requests than workers, TLS (not carried to a worker yet).
func CheckWorkers(n int, o Options) error {
	switch {
	case n > MaxWorkers:
		return fmt.Errorf("--workers %d: at most %d (each is a process with its own clients; more than the load generator's cores buys nothing)", n, MaxWorkers)
	case o.TLS != nil:
		return fmt.Errorf("--workers with --tls is not supported yet")
	case o.Clients < n:
		return fmt.Errorf("--workers %d needs at least one client each: -c %d", n, o.Clients)
	case o.Requests > 0 && o.Requests < int64(n):
		return fmt.Errorf("--workers %d needs at least one request each: -n %d", n, o.Requests)
	}
	return nil
}

// MaxWorkers bounds the load workers of one run, local processes or
// hosts, for bench and the lab alike.
const MaxWorkers = 64

// WorkerSpecs splits o over n workers: each gets its share of -c, -n and
// --rate (Shares) and its own seed, so they do not send the same keys;
// with ticks, each keeps its progress intervals (WorkersOptions.Progress).
func WorkerSpecs(o Options, t Test, data []byte, n int, ticks bool) []WorkerSpec {
	o.Progress, o.ProgressFinal, o.Ready, o.ServerProc = nil, false, nil, nil
	clients, reqs := Shares(int64(o.Clients), n), Shares(o.Requests, n)
	out := make([]WorkerSpec, n)
	for i := range out {
		wo := o
		wo.Clients, wo.Requests, wo.Rate = int(clients[i]), reqs[i], o.Rate/float64(n)
		wo.Seed = o.Seed + uint64(i)
		out[i] = WorkerSpec{Options: wo, Test: t, Data: data, Ticks: ticks}
	}
	return out
}

// RunWorker runs one worker's share: spec's test, its start held by
// ready (Options.Ready), its progress intervals recorded when asked.
func RunWorker(ctx context.Context, spec WorkerSpec, ready func(context.Context) error) (*benchdata.Summary, []WorkerTick, error) {
	o := spec.Options
	o.Ready = ready
	var rec *TickRecorder
	if spec.Ticks {
		rec = &TickRecorder{}
		o.Progress = rec.Record
	}
	sum, err := Run(ctx, o, spec.Test, spec.Data)
	if rec == nil {
		return sum, nil, err
	}
	return sum, rec.Ticks(), err
}

// AwaitStart is a worker's side of the ready barrier once it has said it
// is ready, for a local process and a remote session's worker alike: it
// waits for the coordinator's start (a delay that puts every worker's
// start at one instant), then that delay. A closed start means the
// coordinator went away; ctx ending stops the wait with its cause.
func AwaitStart(ctx context.Context, start <-chan time.Duration) error {
	var d time.Duration
	select {
	case <-ctx.Done():
		return fmt.Errorf("stopped before the common start: %w", context.Cause(ctx))
	case v, ok := <-start:
		if !ok {
			return errors.New("the coordinating redline went away before the start")
		}
		d = v
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("stopped while waiting for the common start: %w", context.Cause(ctx))
	case <-t.C:
		return nil
	}
}

// WorkerShare is what one worker was asked to do: its share of -c, -n
// and --rate. The merged Config is the sum of the shares, so a worker
// that reported nothing still counts in what was asked.
type WorkerShare struct {
	Clients  int
	Requests int64
	Rate     float64
}

// ShareOf is spec's share.
func ShareOf(spec WorkerSpec) WorkerShare {
	return WorkerShare{Clients: spec.Options.Clients, Requests: spec.Options.Requests, Rate: spec.Options.Rate}
}

// WorkerPart is one worker's outcome for MergeWorkers: its identity, its
// Summary (nil when it reported none) and its error.
type WorkerPart struct {
	Worker  int
	Host    string
	Share   WorkerShare
	Summary *benchdata.Summary
	Clock   *benchdata.WorkerClock
	Ticks   []WorkerTick
	Err     error
}

// name is how messages name the worker: its number and host.
func (p WorkerPart) name() string { return WorkerName(p.Worker, p.Host) }

// WorkerName is how every message names a worker of a --workers run.
func WorkerName(n int, host string) string {
	if host == "" {
		return fmt.Sprintf("worker %d", n)
	}
	return fmt.Sprintf("worker %d (%s)", n, host)
}

// MergeWorkers merges the Summaries of one test run by several load
// processes at a common start time into one: histograms are merged (so
// percentiles are exact over the union of the samples, never averaged),
// counts summed, and the interval runs from the earliest start to the
// latest end. Workers lists each part's own figures under the part's own
// number and host, a part without a Summary included (with its error).
// Times of a part with a Clock are moved onto the coordinator's clock.
// Their failover figures (--reconnect) merge too (mergeFailover).
func MergeWorkers(parts []WorkerPart) (*benchdata.Summary, error) {
	first := slices.IndexFunc(parts, func(p WorkerPart) bool { return p.Summary != nil })
	if first < 0 {
		return nil, fmt.Errorf("no worker results to merge")
	}
	m := *parts[first].Summary
	m.Histogram, m.UncorrectedHistogram, m.Uncorrected = nil, nil, nil
	m.Commands, m.Cluster, m.Connections, m.Drain, m.Workers, m.Failover = nil, nil, nil, nil, nil, nil
	m.Requests, m.Errors, m.ErrorsByType, m.Error = 0, 0, nil, ""
	m.Config.Clients, m.Config.Requests, m.Config.Rate, m.Config.Threads = 0, 0, 0, 0
	m.Start, m.End = time.Time{}, time.Time{}
	var errs []string
	var conns []*benchdata.Connections
	var failovers []failoverPart
	for _, part := range parts {
		w := benchdata.WorkerResult{Worker: part.Worker, Host: part.Host, Clock: part.Clock}
		if w.Host == "" && part.Summary != nil {
			w.Host = part.Summary.Client.Hostname
		}
		if part.Err != nil {
			w.Error = part.Err.Error()
		}
		m.Config.Clients += part.Share.Clients
		m.Config.Requests += part.Share.Requests
		m.Config.Rate += part.Share.Rate
		p := part.Summary
		if p == nil {
			m.WorkersFailed++
			errs = append(errs, part.name()+": "+cmp.Or(w.Error, "no result"))
			m.Workers = append(m.Workers, w)
			continue
		}
		if p.Histogram == nil {
			return nil, fmt.Errorf("%s's result has no histogram", part.name())
		}
		start, end := p.Start, p.End
		if part.Clock != nil { // onto the coordinator's clock
			off := time.Duration(part.Clock.OffsetMS * float64(time.Millisecond))
			start, end = start.Add(-off), end.Add(-off)
		}
		if m.Start.IsZero() || start.Before(m.Start) {
			m.Start = start
		}
		if end.After(m.End) {
			m.End = end
		}
		if part.Share == (WorkerShare{}) { // a caller that did not say
			m.Config.Clients += p.Config.Clients
			m.Config.Requests += p.Config.Requests
			m.Config.Rate += p.Config.Rate
		}
		addCounts(&m, p)
		if p.Error != "" && w.Error == "" {
			w.Error = p.Error
		}
		if w.Error != "" {
			errs = append(errs, part.name()+": "+w.Error)
		}
		conns = append(conns, p.Connections)
		failovers = append(failovers, failoverPart{start: start, end: end, f: p.Failover})
		w.Clients, w.Requests, w.RPS, w.Latency, w.Histogram = p.Config.Clients, p.Requests, p.RPS, p.Latency, p.Histogram
		w.Start, w.End = start, end
		if p.Connections != nil {
			w.Kernel = p.Connections.Kernel
		}
		m.Workers = append(m.Workers, w)
	}
	m.Error = strings.Join(errs, "; ")
	m.ElapsedSeconds = m.End.Sub(m.Start).Seconds()
	m.Connections = mergeConnectionsOf(parts, conns, m.ElapsedSeconds)
	m.Failover = mergeFailover(failovers, m.Start)
	digest(&m)
	return &m, nil
}

// addCounts adds p's counts and histograms to m.
func addCounts(m, p *benchdata.Summary) {
	m.Histogram = mergeInto(m.Histogram, p.Histogram)
	if p.UncorrectedHistogram != nil {
		m.UncorrectedHistogram = mergeInto(m.UncorrectedHistogram, p.UncorrectedHistogram)
	}
	m.Requests += p.Requests
	m.Errors += p.Errors
	for k, v := range p.ErrorsByType {
		if m.ErrorsByType == nil {
			m.ErrorsByType = map[string]int64{}
		}
		m.ErrorsByType[k] += v
	}
	m.Interrupted = m.Interrupted || p.Interrupted
	m.Config.Threads += p.Config.Threads
	m.Commands = mergeCommands(m.Commands, p.Commands)
	m.Drain = mergeDrain(m.Drain, p.Drain)
	m.Cluster = mergeCluster(m.Cluster, p.Cluster)
}

// digest computes m's derived figures from its merged histograms.
func digest(m *benchdata.Summary) {
	m.Latency = benchdata.Digest(m.Histogram.Histogram)
	if m.UncorrectedHistogram != nil {
		d := benchdata.Digest(m.UncorrectedHistogram.Histogram)
		m.Uncorrected = &d
	}
	el := m.ElapsedSeconds
	m.RPS = perSecond(m.Requests, el)
	for i := range m.Commands {
		c := &m.Commands[i]
		c.Latency, c.RPS = benchdata.Digest(c.Histogram.Histogram), perSecond(c.Requests, el)
	}
	if m.Cluster != nil {
		for i := range m.Cluster.Nodes {
			n := &m.Cluster.Nodes[i]
			n.Latency, n.RPS = benchdata.Digest(n.Histogram.Histogram), perSecond(n.Requests, el)
		}
	}
}

func perSecond(n int64, seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return float64(n) / seconds
}

// mergeInto adds h to acc (a new histogram of h's precision when nil).
func mergeInto(acc, h *benchdata.Histogram) *benchdata.Histogram {
	if h == nil {
		return acc
	}
	if acc == nil {
		acc = benchdata.NewHistogram(int(h.SignificantFigures()))
	}
	acc.Merge(h.Histogram)
	return acc
}

func mergeCommands(acc, cs []benchdata.CommandResult) []benchdata.CommandResult {
	for _, c := range cs {
		i := slices.IndexFunc(acc, func(a benchdata.CommandResult) bool { return a.Name == c.Name })
		if i < 0 {
			acc = append(acc, benchdata.CommandResult{Name: c.Name})
			i = len(acc) - 1
		}
		acc[i].Requests += c.Requests
		acc[i].Histogram = mergeInto(acc[i].Histogram, c.Histogram)
	}
	return acc
}

// mergeConnectionsOf merges the parts' connection figures. Counts and
// histograms add up; PerSecond is the total opened over the merged
// interval. Kernel evidence is per namespace, not per process: the
// server's side is kept once (every worker read the same counters over
// overlapping intervals: the widest reading), the client's side only
// when every worker ran on one host (again the widest reading, since
// each counted the others' sockets too); workers on several hosts keep
// theirs in their own lines (WorkerResult.Kernel), never summed.
func mergeConnectionsOf(parts []WorkerPart, cs []*benchdata.Connections, elapsed float64) *benchdata.Connections {
	var acc *benchdata.Connections
	perSec := false
	for _, c := range cs {
		if c == nil {
			continue
		}
		acc = mergeConnections(acc, c)
		perSec = perSec || c.PerSecond > 0
	}
	if acc == nil {
		return nil
	}
	if perSec {
		acc.PerSecond = perSecond(acc.Opened, elapsed)
	}
	var e benchdata.NetEvidence
	for _, c := range cs {
		if c == nil || c.Kernel == nil {
			continue
		}
		if s := c.Kernel.Server; s != nil && (e.Server == nil || serverWeight(s) > serverWeight(e.Server)) {
			e.Server = s
		}
		if cl := c.Kernel.Client; cl != nil && (e.Client == nil || cl.ActiveOpens > e.Client.ActiveOpens) {
			e.Client = cl
		}
	}
	if !oneHost(parts) {
		e.Client = nil
	}
	if e.Server != nil || e.Client != nil || acc.Failures["EADDRNOTAVAIL"] > 0 {
		explain(&e, acc)
	}
	return acc
}

// serverWeight orders readings of one server namespace by how much they saw.
func serverWeight(s *benchdata.ServerNet) uint64 {
	return (s.ListenOverflows+s.ListenDrops)<<32 + s.PassiveOpens
}

// oneHost reports whether every part ran on the same host.
func oneHost(parts []WorkerPart) bool {
	for _, p := range parts[1:] {
		if p.Host != parts[0].Host {
			return false
		}
	}
	return true
}

func mergeConnections(acc, c *benchdata.Connections) *benchdata.Connections {
	if c == nil {
		return acc
	}
	if acc == nil {
		acc = &benchdata.Connections{}
	}
	acc.Opened += c.Opened
	acc.Retries += c.Retries
	acc.SetupSeconds = max(acc.SetupSeconds, c.SetupSeconds)
	acc.ConnectHistogram = mergeInto(acc.ConnectHistogram, c.ConnectHistogram)
	acc.ReadyHistogram = mergeInto(acc.ReadyHistogram, c.ReadyHistogram)
	if acc.ConnectHistogram != nil {
		acc.Connect = benchdata.Digest(acc.ConnectHistogram.Histogram)
	}
	if acc.ReadyHistogram != nil {
		acc.Ready = benchdata.Digest(acc.ReadyHistogram.Histogram)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Failures)) {
		if acc.Failures == nil {
			acc.Failures = map[string]int64{}
		}
		acc.Failures[k] += c.Failures[k]
	}
	return acc
}

func mergeDrain(acc, d *benchdata.Drain) *benchdata.Drain {
	if d == nil {
		return acc
	}
	if acc == nil {
		acc = &benchdata.Drain{LimitSeconds: d.LimitSeconds}
	}
	acc.Seconds = max(acc.Seconds, d.Seconds)
	acc.LateAtEnd += d.LateAtEnd
	acc.OutstandingAtEnd += d.OutstandingAtEnd
	acc.Unsent += d.Unsent
	acc.Unanswered += d.Unanswered
	return acc
}

func mergeCluster(acc, c *benchdata.Cluster) *benchdata.Cluster {
	if c == nil {
		return acc
	}
	if acc == nil {
		acc = &benchdata.Cluster{}
	}
	acc.Moved += c.Moved
	acc.Asked += c.Asked
	acc.Refreshes += c.Refreshes
	for _, n := range c.Nodes {
		i := slices.IndexFunc(acc.Nodes, func(a benchdata.NodeResult) bool { return a.Addr == n.Addr })
		if i < 0 {
			acc.Nodes = append(acc.Nodes, benchdata.NodeResult{Addr: n.Addr, ID: n.ID, Role: n.Role, Primary: n.Primary, Slots: n.Slots, Replicas: n.Replicas})
			i = len(acc.Nodes) - 1
		}
		acc.Nodes[i].Requests += n.Requests
		acc.Nodes[i].Histogram = mergeInto(acc.Nodes[i].Histogram, n.Histogram)
	}
	return acc
}

// writeWorkerLines writes one line per load process of a --workers run,
// each under its own number and host.
func writeWorkerLines(w io.Writer, indent string, s *benchdata.Summary) {
	for _, p := range s.Workers {
		line := fmt.Sprintf("%s%s: %d clients, %d requests, %.2f requests per second, p50=%.3f p99=%.3f max=%.3f msec",
			indent, WorkerName(p.Worker, p.Host), p.Clients, p.Requests, p.RPS, p.Latency.P50, p.Latency.P99, p.Latency.Max)
		if c := p.Clock; c != nil && (c.OffsetMS > 1 || c.OffsetMS < -1) {
			line += fmt.Sprintf("; clock %+.1f ms (±%.1f)", c.OffsetMS, c.RTTMS/2)
		}
		if p.Error != "" {
			line += "; error: " + p.Error
		}
		fmt.Fprintln(w, line)
	}
}
