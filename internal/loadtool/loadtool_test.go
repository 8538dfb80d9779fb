package loadtool

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/testutil"
)

func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseBenchmarkCSV(t *testing.T) {
	rows, err := ParseBenchmarkCSV(open(t, "redis-benchmark-csv.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{Test: "SET", RPS: 55555.55, Avg: 0.556, Min: 0.128, P50: 0.439, P95: 0.847, P99: 3.927, Max: 4.903},
		{Test: "GET", RPS: 71942.45, Avg: 0.441, Min: 0.136, P50: 0.431, P95: 0.655, P99: 0.783, Max: 2.311},
	}
	if len(rows) != 2 || rows[0] != want[0] || rows[1] != want[1] {
		t.Errorf("got %+v", rows)
	}
	for _, bad := range []string{"", "\"test\",\"rps\"\n", "\"SET\",\"x\",\"1\",\"1\",\"1\",\"1\",\"1\",\"1\"\n"} {
		if _, err := ParseBenchmarkCSV(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseMemtier(t *testing.T) {
	rows, err := ParseMemtier(open(t, "memtier-default.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[3].Test != "Totals" || rows[3].RPS != 133451.66 || rows[3].P99 != 0.919 || rows[3].P999 != 3.119 || rows[0].Avg != 0.08072 {
		t.Errorf("ALL STATS: %+v", rows)
	}
	rows, err = ParseMemtier(open(t, "memtier-runs.txt")) // several runs: the aggregated average
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[3].Test != "Totals" || rows[3].RPS == 0 {
		t.Errorf("AGGREGATED AVERAGE: %+v", rows)
	}
	if _, err := ParseMemtier(strings.NewReader("4 Threads\n")); err == nil {
		t.Error("no table: no error")
	}
}

// TestParseMemtierColumns: the columns are read by their header's names.
// The layouts (not their figures) are memtier's: an extra percentile
// column from --print-percentiles (as in redis/memtier_benchmark#184),
// percentiles chosen in another order, and the one "Latency" column of
// memtier before percentiles (as in redis/memtier_benchmark#68).
func TestParseMemtierColumns(t *testing.T) {
	table := func(header, totals string) string {
		return "ALL STATS\n=====\n" + header + "\n-----\nSets 1.00 --- --- " + totals + "\nTotals 2.00 1.00 1.00 " + totals + "\n"
	}
	for _, c := range []struct {
		name, header, totals string
		want                 Row
	}{
		{"extra percentile", "Type Ops/sec Hits/sec Misses/sec Avg. Latency p50 Latency p99 Latency p99.9 Latency p99.990 Latency KB/sec",
			"3.2 2.8 8.5 12.9 95.7 6537.40", Row{Test: "Totals", RPS: 2, Avg: 3.2, P50: 2.8, P99: 8.5, P999: 12.9}},
		{"percentiles reordered", "Type Ops/sec Hits/sec Misses/sec Avg. Latency p99.9 Latency p95 Latency p50 Latency KB/sec",
			"3.2 12.9 8.5 2.8 6537.40", Row{Test: "Totals", RPS: 2, Avg: 3.2, P50: 2.8, P95: 8.5, P999: 12.9}},
		{"average only", "Type Ops/sec Hits/sec Misses/sec Latency KB/sec",
			"0.231 22561.95", Row{Test: "Totals", RPS: 2, Avg: 0.231}},
	} {
		rows, err := ParseMemtier(strings.NewReader(table(c.header, c.totals)))
		if err != nil || len(rows) != 2 || rows[1] != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.name, rows, err, c.want)
		}
	}
	if _, err := ParseMemtier(strings.NewReader(table("Type Ops/sec Latency KB/sec", "1.0"))); err == nil {
		t.Error("a row shorter than its header: no error")
	}
}

func TestBenchmarkArgv(t *testing.T) {
	r := Request{Args: strings.Fields("-t ping,set,get -P 16 -d 1000 -c 50 -h 10.0.0.5 -p 7000 -q --csv -n 20000"), Test: "PING_INLINE"}
	got, err := benchmarkArgv(r, "127.0.0.1", "6400")
	if err != nil {
		t.Fatal(err)
	}
	want := "-P 16 -d 1000 -c 50 -n 20000 -h 127.0.0.1 -p 6400 -t ping_inline --csv"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
	r.Args = []string{"-t", "set", "--duration", "5s"}
	if _, err := benchmarkArgv(r, "h", "1"); err == nil || !strings.Contains(err.Error(), "--duration") {
		t.Errorf("--duration: %v", err)
	}
}

// TestPreloadedRedisBenchmark runs redis-benchmark as the load with an
// allocator preloaded, and sees the library mapped in its process.
func TestPreloadedRedisBenchmark(t *testing.T) {
	testutil.NeedTools(t, "redis-benchmark")
	lib, err := redisserver.AllocatorLib("tcmalloc")
	if err != nil {
		t.Skip(err)
	}
	srv := redistest.Start(t)
	var maps string
	res, err := Run(context.Background(), Request{Tool: "redis-benchmark", Args: strings.Fields("-t set -n 2000 -c 4"), Test: "SET",
		Addr: srv.Addr(), Env: []string{"LD_PRELOAD=" + lib},
		Started: func(pid int) {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/maps")
			maps = string(b)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(maps, lib) || len(res.Preloaded) != 1 || res.Preloaded[0] != lib {
		t.Errorf("%s not mapped in redis-benchmark (preloaded %v)", lib, res.Preloaded)
	}
	if s := res.Summary; s.Title != "SET" || s.RPS <= 0 || s.Latency.P99 <= 0 || s.Requests != 2000 {
		t.Errorf("summary: %+v", s)
	}
}
