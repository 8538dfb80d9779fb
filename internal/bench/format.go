package bench

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"redline/internal/benchdata"
)

// The text formats below follow redis-benchmark 7.x byte for byte in
// layout (see ../shared/reference/loadgen.md A5); the numbers are redline's
// own: per-request latency with nanosecond resolution and a throughput
// computed in float64 over nanoseconds.

// WriteReport writes the default report block for s.
func WriteReport(w io.Writer, s *benchdata.Summary) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "====== %s ======\n", s.Title)
	fmt.Fprintf(b, "  %d requests completed in %.2f seconds\n", s.Requests, s.ElapsedSeconds)
	fmt.Fprintf(b, "  %d parallel clients\n", s.Config.Clients)
	fmt.Fprintf(b, "  %d bytes payload\n", s.Config.PayloadBytes)
	fmt.Fprintf(b, "  keep alive: %d\n", boolInt(s.Config.KeepAlive))
	if s.Server.Config != nil {
		fmt.Fprintf(b, "  host configuration \"save\": %s\n", s.Server.Config["save"])
		fmt.Fprintf(b, "  host configuration \"appendonly\": %s\n", s.Server.Config["appendonly"])
	}
	if t := threadsPerProcess(s); t > 1 {
		fmt.Fprintf(b, "  multi-thread: yes\n  threads: %d\n", t)
	} else {
		fmt.Fprintf(b, "  multi-thread: no\n")
	}
	writeExtras(b, s)
	fmt.Fprintf(b, "\nLatency by percentile distribution:\n")
	writePercentiles(b, s.Histogram)
	fmt.Fprintf(b, "\nCumulative distribution of latencies:\n")
	writeCumulative(b, s.Histogram)
	fmt.Fprintf(b, "\nSummary:\n")
	fmt.Fprintf(b, "  throughput summary: %.2f requests per second\n", s.RPS)
	fmt.Fprintf(b, "  latency summary (msec):\n")
	fmt.Fprintf(b, "    %9s %9s %9s %9s %9s %9s\n", "avg", "min", "p50", "p95", "p99", "max")
	l := s.Latency
	fmt.Fprintf(b, "    %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", l.Avg, l.Min, l.P50, l.P95, l.P99, l.Max)
	if u := s.Uncorrected; u != nil {
		fmt.Fprintf(b, "  uncorrected latency (msec, from the actual send; hides queueing):\n")
		fmt.Fprintf(b, "    %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f\n", u.Avg, u.Min, u.P50, u.P95, u.P99, u.Max)
	}
	for _, c := range s.Commands {
		fmt.Fprintf(b, "  %s: %.2f requests per second, p50=%.3f p99=%.3f msec (%d requests)\n", c.Name, c.RPS, c.Latency.P50, c.Latency.P99, c.Requests)
	}
	if d := s.Drain; d != nil && (d.LateAtEnd > 0 || d.Expired()) {
		fmt.Fprintf(b, "  %s\n", drainNote(d))
	}
	writeWorkerLines(b, "  ", s)
	return b.Flush()
}

// threadsPerProcess is what redis-benchmark's "threads:" line means: the
// event loops of one process (--threads, or one per primary with
// --cluster). A --workers run's Config sums its processes' loops; the
// processes are named in the worker lines, not here, so the header of
// "--workers 2" is the header of the same run without it.
func threadsPerProcess(s *benchdata.Summary) int {
	if n := len(s.Workers) - s.WorkersFailed; n > 1 {
		return s.Config.Threads / n
	}
	return s.Config.Threads
}

// WriteNotes writes what redline measures beyond redis-benchmark's own
// lines, for stderr, so stdout stays redis-benchmark's layout: the cluster's
// per-node lines and the connections. full (the default report) gives the
// Connections block always; otherwise (-q, --csv) the connections line
// appears only after a failed connect or a set-up slower than SlowSetup.
// A kernel problem (listen-queue overflow, SYN cookies, local ports) is
// written in every mode, with its cause and fix. Every figure is also in
// the -o JSON.
func WriteNotes(w io.Writer, s *benchdata.Summary, full bool) error {
	b := bufio.NewWriter(w)
	if s.Cluster != nil {
		writeClusterNodes(b, s.Title+": ", s)
	}
	if s.Failover != nil {
		writeFailover(b, s.Title+": ", s.Failover)
	}
	c := s.Connections
	switch {
	case c == nil:
	case full:
		fmt.Fprintf(b, "%s: connections: %s\n", s.Title, connectionsNote(c, s.Config.Clients))
		writeKernel(b, s.Title+": ", c.Kernel)
	case len(c.Failures) > 0 || c.SetupSeconds > SlowSetup.Seconds():
		fmt.Fprintf(b, "%s: connections: %s\n", s.Title, connectionsNote(c, s.Config.Clients))
	}
	if c != nil && c.Kernel != nil && !full {
		for _, p := range c.Kernel.Problems {
			fmt.Fprintf(b, "%s: %s\n", s.Title, p)
		}
	}
	return b.Flush()
}

// SlowSetup is how long connection set-up may take before -q reports it.
const SlowSetup = time.Second

// connectionsNote is one line on how the connections were set up.
func connectionsNote(c *benchdata.Connections, clients int) string {
	head := fmt.Sprintf("%d opened, all %d ready %.3f ms after the first connect", c.Opened, clients, c.SetupSeconds*1e3)
	if c.PerSecond > 0 {
		head = fmt.Sprintf("%d opened, %.2f connections per second", c.Opened, c.PerSecond)
	}
	l := fmt.Sprintf("%s; connect p50 %.3f p99 %.3f max %.3f msec, ready (after AUTH/SELECT/HELLO) p50 %.3f p99 %.3f max %.3f msec",
		head, c.Connect.P50, c.Connect.P99, c.Connect.Max, c.Ready.P50, c.Ready.P99, c.Ready.Max)
	if len(c.Failures) > 0 {
		var f []string
		for _, k := range slices.Sorted(maps.Keys(c.Failures)) {
			f = append(f, fmt.Sprintf("%s %d", k, c.Failures[k]))
		}
		l += "; failed connects: " + strings.Join(f, ", ")
	}
	if c.Retries > 0 {
		l += fmt.Sprintf(" (%d retried)", c.Retries)
	}
	return l
}

// drainNote says what the end of a --rate --duration run left to send or
// await, and what became of it.
func drainNote(d *benchdata.Drain) string {
	head := fmt.Sprintf("at the end of the duration %d requests were due and unsent, %d awaited replies", d.LateAtEnd, d.OutstandingAtEnd)
	if d.Expired() {
		return fmt.Sprintf("%s; the drain limit (%gs) cut off %d never sent and %d never answered, which no figure above includes (raise --drain)", head, d.LimitSeconds, d.Unsent, d.Unanswered)
	}
	return fmt.Sprintf("%s; drained in %.3f seconds (included above)", head, d.Seconds)
}

// writeExtras adds header lines for settings redis-benchmark does not have;
// a run with only redis-benchmark's flags prints none of them.
func writeExtras(b *bufio.Writer, s *benchdata.Summary) {
	c := s.Config
	if c.Pipeline > 1 {
		fmt.Fprintf(b, "  pipeline: %d\n", c.Pipeline)
	}
	if c.Rate > 0 {
		fmt.Fprintf(b, "  fixed rate: %.0f requests per second (open loop; latency from the intended send time)\n", c.Rate)
	}
	if c.KeyDist != "" && c.KeyDist != string(KeyUniform) {
		fmt.Fprintf(b, "  keys: %s over %d\n", c.KeyDist, c.KeySpace)
	}
	if c.ValueSizes != "" {
		fmt.Fprintf(b, "  value sizes: %s\n", c.ValueSizes)
	}
	if c.WarmupSec > 0 {
		fmt.Fprintf(b, "  warm-up: %.1f seconds (not measured)\n", c.WarmupSec)
	}
	if s.Interrupted {
		fmt.Fprintf(b, "  interrupted: partial results\n")
	}
	if s.WorkersFailed > 0 {
		fmt.Fprintf(b, "  partial results: %d of %d workers sent no result (their load is missing; the configuration is what was asked)\n", s.WorkersFailed, len(s.Workers))
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// writePercentiles prints HdrHistogram_c's percentile iteration with one
// tick per half distance, a line whenever the cumulative count changes.
func writePercentiles(b *bufio.Writer, h *benchdata.Histogram) {
	if h == nil || h.TotalCount() == 0 {
		return
	}
	total := h.TotalCount()
	prev := int64(-1)
	for _, br := range h.CumulativeDistribution() {
		if br.Count != prev || br.Count == total {
			fmt.Fprintf(b, "%3.3f%% <= %.3f milliseconds (cumulative count %d)\n", br.Quantile, float64(br.ValueAt)/1e6, br.Count)
		}
		prev = br.Count
	}
}

// writeCumulative prints HdrHistogram_c's linear iteration in 100 µs steps,
// 1 ms steps once past 2 ms, as redis-benchmark does.
func writeCumulative(b *bufio.Writer, h *benchdata.Histogram) {
	if h == nil || h.TotalCount() == 0 {
		return
	}
	const usec = 1000
	g := newGeometry(h.Histogram)
	bars := h.Distribution()
	total := h.TotalCount()
	step, level := int64(100*usec), int64(100*usec)
	var cum int64
	next, prev := 0, int64(-1)
	for {
		lo := g.lowestEquivalent(level)
		for next < len(bars) && bars[next].From <= lo {
			cum += bars[next].Count
			next++
		}
		hi := g.highestEquivalent(level)
		pct := float64(cum) / float64(total) * 100
		if cum != prev || cum == total {
			fmt.Fprintf(b, "%3.3f%% <= %.3f milliseconds (cumulative count %d)\n", pct, float64(hi)/1e6, cum)
		}
		prev = cum
		// As in HdrHistogram_c, the next level is already set with the old
		// step when redis-benchmark widens it past 2 ms.
		level += step
		if hi > 2000*usec {
			step = 1000 * usec
		}
		// HdrHistogram_c stops once everything is counted and the next
		// bucket lies beyond the next reporting level.
		if cum >= total && hi+1 <= g.lowestEquivalent(level) {
			return
		}
	}
}

// geometry reproduces HdrHistogram's bucket arithmetic, which
// hdrhistogram-go does not export, so the linear iteration can find the
// bucket of any reporting level.
type geometry struct {
	unitMag, subHalfMag uint
	subCount            int64
	lzBase              int
}

func newGeometry(h *hdr.Histogram) geometry {
	largest := int64(2)
	for range h.SignificantFigures() {
		largest *= 10
	}
	subCountMag := uint(bits.Len64(uint64(largest - 1)))
	g := geometry{unitMag: uint(bits.Len64(uint64(h.LowestTrackableValue())) - 1)}
	g.subHalfMag = max(subCountMag, 1) - 1
	g.subCount = 1 << (g.subHalfMag + 1)
	g.lzBase = 64 - int(g.unitMag) - int(g.subHalfMag) - 1
	return g
}

func (g geometry) bucketIndex(v int64) int {
	mask := uint64(g.subCount-1) << g.unitMag
	return g.lzBase - bits.LeadingZeros64(uint64(v)|mask)
}

func (g geometry) lowestEquivalent(v int64) int64 {
	bi := g.bucketIndex(v)
	sub := v >> (uint(bi) + g.unitMag)
	return sub << (uint(bi) + g.unitMag)
}

func (g geometry) highestEquivalent(v int64) int64 {
	bi := g.bucketIndex(v)
	sub := v >> (uint(bi) + g.unitMag)
	adj := bi
	if sub >= g.subCount {
		adj++
	}
	return g.lowestEquivalent(v) + (1 << (g.unitMag + uint(adj))) - 1
}

// WriteQuiet writes the -q line.
func WriteQuiet(w io.Writer, s *benchdata.Summary) error {
	_, err := fmt.Fprintf(w, "%s: %.2f requests per second, p50=%.3f msec\n", s.Title, s.RPS, s.Latency.P50)
	if err == nil && s.Drain.Expired() {
		_, err = fmt.Fprintf(w, "  %s: %s\n", s.Title, drainNote(s.Drain))
	}
	if err == nil {
		writeWorkerLines(w, "  ", s)
	}
	return err
}

// CSVHeader is redis-benchmark's CSV header line.
const CSVHeader = `"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"` + "\n"

// WriteCSVRow writes one CSV row. Unlike redis-benchmark, a quote in the
// title is escaped (doubled, RFC 4180), so a custom command such as
// eval "return 1" 0 does not break the file.
func WriteCSVRow(w io.Writer, s *benchdata.Summary) error {
	l := s.Latency
	_, err := fmt.Fprintf(w, "%s,\"%.2f\",\"%.3f\",\"%.3f\",\"%.3f\",\"%.3f\",\"%.3f\",\"%.3f\"\n",
		csvQuote(s.Title), s.RPS, l.Avg, l.Min, l.P50, l.P95, l.P99, l.Max)
	return err
}

func csvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
