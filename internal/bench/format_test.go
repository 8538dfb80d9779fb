package bench

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"redline/internal/testutil"
	"strings"
	"testing"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/google/go-cmp/cmp"

	"redline/internal/benchdata"
)

// goldenSummary is a Summary with a fixed, known histogram: 20000 requests
// with latencies spread like a loopback SET run plus a slow tail.
func goldenSummary() *benchdata.Summary {
	h := benchdata.NewHistogram(3)
	r := rand.New(rand.NewPCG(1, 2))
	for range 19900 {
		h.RecordValue(int64(100_000 + r.NormFloat64()*30_000 + 200_000*r.Float64()))
	}
	for i := range 100 {
		h.RecordValue(int64(2_000_000 + i*40_000))
	}
	return &benchdata.Summary{
		Title: "SET", Requests: h.TotalCount(), ElapsedSeconds: 0.289, RPS: float64(h.TotalCount()) / 0.289,
		Config:    benchdata.RunConfig{Clients: 50, PayloadBytes: 3, KeepAlive: true, Threads: 1, Pipeline: 1},
		Server:    benchdata.ServerInfo{Config: map[string]string{"save": "", "appendonly": "no"}},
		Latency:   benchdata.Digest(h.Histogram),
		Histogram: h,
	}
}

func TestGoldenReport(t *testing.T) {
	var b bytes.Buffer
	if err := WriteReport(&b, goldenSummary()); err != nil {
		t.Fatal(err)
	}
	testutil.Golden(t, filepath.Join("testdata", "report.golden"), b.Bytes())
	// The layout is redis-benchmark's: same section headers in the same
	// order as in its real output.
	sample, err := os.ReadFile("testdata/redis-benchmark-7.0.15/default_set.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, marker := range []string{"====== SET ======", "requests completed in", "parallel clients", "bytes payload",
		"keep alive: 1", `host configuration "save":`, `host configuration "appendonly": no`, "multi-thread: no",
		"Latency by percentile distribution:", "Cumulative distribution of latencies:", "Summary:",
		"throughput summary:", "latency summary (msec):", "avg       min       p50       p95       p99       max"} {
		if strings.Count(string(sample), marker) != strings.Count(b.String(), marker) {
			t.Errorf("marker %q: sample has %d, ours %d", marker, strings.Count(string(sample), marker), strings.Count(b.String(), marker))
		}
	}
}

func TestGoldenQuietAndCSV(t *testing.T) {
	s := goldenSummary()
	var b bytes.Buffer
	WriteQuiet(&b, s)
	b.WriteString(CSVHeader)
	WriteCSVRow(&b, s)
	s.Title = `eval "return 1" 0`
	WriteCSVRow(&b, s)
	testutil.Golden(t, filepath.Join("testdata", "quiet_csv.golden"), b.Bytes())
}

func TestGoldenRateAndMix(t *testing.T) {
	s := goldenSummary()
	s.Title = "SET:GET 1:10"
	u := s.Latency
	u.P99 /= 4
	s.Uncorrected = &u
	s.Config.Rate, s.Config.Pipeline, s.Config.Threads = 50000, 1, 2
	s.Commands = []benchdata.CommandResult{{Name: "SET", Requests: 1818, RPS: 6290.66, Latency: s.Latency}, {Name: "GET", Requests: 18182, RPS: 62913.49, Latency: s.Latency}}
	s.Drain = &benchdata.Drain{LimitSeconds: 10, Seconds: 1.523, LateAtEnd: 1491, OutstandingAtEnd: 9}
	s.Connections = &benchdata.Connections{Opened: 50, SetupSeconds: 0.0042, Connect: benchdata.Latency{P50: 0.051, P99: 0.2, Max: 0.31}, Ready: benchdata.Latency{P50: 0.09, P99: 0.35, Max: 0.4}}
	var b, e bytes.Buffer
	WriteReport(&b, s)
	WriteNotes(&e, s, true)
	WriteQuiet(&b, s) // set-up fast, no failures: no connections line
	WriteNotes(&e, s, false)
	s.Drain.Unsent, s.Drain.Unanswered, s.Drain.LimitSeconds = 12, 3, 0.5
	s.Connections.SetupSeconds, s.Connections.Failures, s.Connections.Retries = 1.5, map[string]int64{"EADDRNOTAVAIL": 2, "ECONNREFUSED": 1}, 2
	WriteQuiet(&b, s)
	WriteNotes(&e, s, false)
	b.WriteString("--- stderr ---\n")
	b.Write(e.Bytes())
	testutil.Golden(t, filepath.Join("testdata", "report_rate_mix.golden"), b.Bytes())
}

// noisySummary is a summary with everything redline measures beyond
// redis-benchmark's own report: connections with failures and a slow
// set-up, the kernel's counters with a listen-queue overflow, a cluster.
func noisySummary(title string) *benchdata.Summary {
	s := goldenSummary()
	s.Title = title
	s.Connections = &benchdata.Connections{Opened: 50, SetupSeconds: 1.2, Failures: map[string]int64{"ETIMEDOUT": 1},
		Kernel: &benchdata.NetEvidence{Server: &benchdata.ServerNet{ListenOverflows: 3, ListenDrops: 3},
			Problems: []string{"the server's listen queue overflowed: 3 ListenOverflows ... Fix: raise net.core.somaxconn"}}}
	s.Cluster = &benchdata.Cluster{Nodes: []benchdata.NodeResult{{Addr: "127.0.0.1:7000", Slots: 16384, Requests: s.Requests}}}
	return s
}

// TestOutputShapesAreRedisBenchmarks compares the line shapes (numbers
// aside) of the default report, -q and --csv with redis-benchmark's real
// output: the connections, kernel and cluster lines go to the notes
// (stderr), never to stdout, and the listen-queue problem is in the notes
// of every mode.
func TestOutputShapesAreRedisBenchmarks(t *testing.T) {
	modes := []struct {
		sample string
		full   bool
		write  func(*bytes.Buffer, []*benchdata.Summary)
	}{
		{"default_set.txt", true, func(b *bytes.Buffer, ss []*benchdata.Summary) { WriteReport(b, ss[0]) }},
		{"quiet_set_get.txt", false, func(b *bytes.Buffer, ss []*benchdata.Summary) {
			for _, s := range ss {
				WriteQuiet(b, s)
			}
			b.WriteString("\n") // the end of the suite, as cli's run writes it
		}},
		{"csv_set_get.txt", false, func(b *bytes.Buffer, ss []*benchdata.Summary) {
			b.WriteString(CSVHeader)
			for _, s := range ss {
				WriteCSVRow(b, s)
			}
		}},
	}
	for _, m := range modes {
		t.Run(m.sample, func(t *testing.T) {
			sample, err := os.ReadFile(filepath.Join("testdata", "redis-benchmark-7.0.15", m.sample))
			if err != nil {
				t.Fatal(err)
			}
			ss := []*benchdata.Summary{noisySummary("SET"), noisySummary("GET")}
			var out, notes bytes.Buffer
			m.write(&out, ss)
			if d := cmp.Diff(testutil.LineShapes(string(sample)), testutil.LineShapes(out.String())); d != "" {
				t.Errorf("stdout's shape differs from redis-benchmark's (-redis-benchmark +redline):\n%s", d)
			}
			WriteNotes(&notes, ss[0], m.full)
			for _, want := range []string{"listen queue overflowed", "connections: 50 opened", "127.0.0.1:7000"} {
				if !strings.Contains(notes.String(), want) {
					t.Errorf("notes lack %q:\n%s", want, notes.String())
				}
			}
		})
	}
}

// TestThreadsLineIsPerProcess: --workers 2 without --threads prints the
// header of the same run without --workers (multi-thread: no).
func TestThreadsLineIsPerProcess(t *testing.T) {
	s := goldenSummary()
	s.Config.Threads = 2
	s.Workers = []benchdata.WorkerResult{{Worker: 1}, {Worker: 2}}
	var b bytes.Buffer
	WriteReport(&b, s)
	if !strings.Contains(b.String(), "multi-thread: no\n") || strings.Contains(b.String(), "threads: 2") {
		t.Errorf("--workers 2 without --threads:\n%s", b.String())
	}
	s.Config.Threads = 6 // --workers 2 --threads 3
	b.Reset()
	WriteReport(&b, s)
	if !strings.Contains(b.String(), "multi-thread: yes\n  threads: 3\n") {
		t.Errorf("--workers 2 --threads 3:\n%s", b.String())
	}
}

// TestPercentileSectionFollowsHdrC checks the percentile lines against
// HdrHistogram_c's rules on a small histogram worked out by hand.
func TestPercentileSectionFollowsHdrC(t *testing.T) {
	h := benchdata.NewHistogram(3)
	for _, v := range []int64{1000, 1000, 2000, 3000} { // ns
		h.RecordValue(v)
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	writePercentiles(w, h)
	w.Flush()
	want := "0.000% <= 0.001 milliseconds (cumulative count 2)\n" +
		"75.000% <= 0.002 milliseconds (cumulative count 3)\n" +
		"87.500% <= 0.003 milliseconds (cumulative count 4)\n" +
		"100.000% <= 0.003 milliseconds (cumulative count 4)\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

func TestCumulativeSectionStepsAndEnd(t *testing.T) {
	h := benchdata.NewHistogram(3)
	h.RecordValue(150_000)   // 0.15 ms
	h.RecordValue(2_479_000) // 2.479 ms
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	writeCumulative(w, h)
	w.Flush()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	// 0.1 (0), 0.2 (1), then nothing new until 3.1 ms: after 2.1 ms the
	// step is 1 ms, and the iteration ends at the first level past the max.
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "0.000% <= 0.100") || !strings.HasPrefix(lines[1], "50.000% <= 0.200") || !strings.HasPrefix(lines[2], "100.000% <= 3.101") {
		t.Errorf("cumulative section:\n%s", b.String())
	}
}

func TestGeometryMatchesLibrary(t *testing.T) {
	for _, prec := range []int{1, 2, 3, 4, 5} {
		h := hdr.New(1, int64(benchdata.MaxLatency), prec)
		g := newGeometry(h)
		r := rand.New(rand.NewPCG(3, uint64(prec)))
		for range 2000 {
			v := int64(r.Float64() * r.Float64() * float64(benchdata.MaxLatency))
			lo, hi := g.lowestEquivalent(v), g.highestEquivalent(v)
			if lo > v || hi < v || !h.ValuesAreEquivalent(lo, hi) || h.ValuesAreEquivalent(lo, hi+1) || (lo > 0 && h.ValuesAreEquivalent(lo-1, lo)) {
				t.Fatalf("precision %d value %d: range [%d,%d] disagrees with hdrhistogram-go", prec, v, lo, hi)
			}
		}
	}
}
