package bench

import (
	"context"
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

// MergeWorkers merges the Summaries of one test run by several load
// processes at a common start time into one: histograms are merged (so
// percentiles are exact over the union of the samples, never averaged),
// counts summed, and the interval runs from the earliest start to the
// latest end. Workers lists each part's own figures.
func MergeWorkers(parts []*benchdata.Summary) (*benchdata.Summary, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("no worker results to merge")
	}
	m := *parts[0]
	m.Histogram, m.UncorrectedHistogram, m.Uncorrected = nil, nil, nil
	m.Commands, m.Cluster, m.Connections, m.Drain, m.Workers = nil, nil, nil, nil, nil
	m.Requests, m.Errors, m.ErrorsByType, m.Error = 0, 0, nil, ""
	m.Config.Clients, m.Config.Requests, m.Config.Rate, m.Config.Threads = 0, 0, 0, 0
	var errs []string
	for i, p := range parts {
		if p.Histogram == nil {
			return nil, fmt.Errorf("worker %d's result has no histogram", i+1)
		}
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
		if p.Start.Before(m.Start) {
			m.Start = p.Start
		}
		if p.End.After(m.End) {
			m.End = p.End
		}
		m.Interrupted = m.Interrupted || p.Interrupted
		if p.Error != "" {
			errs = append(errs, fmt.Sprintf("worker %d: %s", i+1, p.Error))
		}
		m.Config.Clients += p.Config.Clients
		m.Config.Requests += p.Config.Requests
		m.Config.Rate += p.Config.Rate
		m.Config.Threads += p.Config.Threads
		m.Commands = mergeCommands(m.Commands, p.Commands)
		m.Connections = mergeConnections(m.Connections, p.Connections)
		m.Drain = mergeDrain(m.Drain, p.Drain)
		m.Cluster = mergeCluster(m.Cluster, p.Cluster)
		m.Workers = append(m.Workers, benchdata.WorkerResult{Worker: i + 1, Host: p.Client.Hostname, Clients: p.Config.Clients,
			Requests: p.Requests, RPS: p.RPS, Latency: p.Latency, Histogram: p.Histogram, Error: p.Error})
	}
	m.Error = strings.Join(errs, "; ")
	m.ElapsedSeconds = m.End.Sub(m.Start).Seconds()
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
	return &m, nil
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

// WorkerStartDelay is how far ahead a --workers run sets the common start
// time, so every process has connected before it.
const WorkerStartDelay = 2 * time.Second

// waitUntil waits for t (no wait when t is zero or past).
func waitUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if t.IsZero() || d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("interrupted while waiting for the common start: %w", ctx.Err())
	case <-timer.C:
		return nil
	}
}

// writeWorkerLines writes one line per load process of a --workers run.
func writeWorkerLines(w io.Writer, indent string, s *benchdata.Summary) {
	for _, p := range s.Workers {
		line := fmt.Sprintf("%sworker %d (%d clients): %d requests, %.2f requests per second, p50=%.3f p99=%.3f max=%.3f msec",
			indent, p.Worker, p.Clients, p.Requests, p.RPS, p.Latency.P50, p.Latency.P99, p.Latency.Max)
		if p.Error != "" {
			line += "; error: " + p.Error
		}
		fmt.Fprintln(w, line)
	}
}
