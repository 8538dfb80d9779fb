package loadtool

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"redline/internal/benchdata"
)

// Row is one test's figures as a load tool printed them: requests per
// second and latencies in milliseconds (absent ones are zero).
type Row struct {
	Test                    string
	RPS                     float64
	Avg, Min, P50, P95, P99 float64
	P999, Max               float64
}

// ParseBenchmarkCSV reads redis-benchmark --csv output:
//
//	"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
//	"SET","55555.55","0.556","0.128","0.439","0.847","3.927","4.903"
func ParseBenchmarkCSV(r io.Reader) ([]Row, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("redis-benchmark --csv: %w", err)
	}
	var rows []Row
	for i, rec := range recs {
		if i == 0 && len(rec) > 0 && rec[0] == "test" {
			continue
		}
		if len(rec) != 8 {
			return nil, fmt.Errorf("redis-benchmark --csv line %d: %d fields, want 8", i+1, len(rec))
		}
		v, err := floats(rec[1:])
		if err != nil {
			return nil, fmt.Errorf("redis-benchmark --csv line %d: %w", i+1, err)
		}
		rows = append(rows, Row{Test: rec[0], RPS: v[0], Avg: v[1], Min: v[2], P50: v[3], P95: v[4], P99: v[5], Max: v[6]})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("redis-benchmark --csv: no results (did it fail? see its error output)")
	}
	return rows, nil
}

// ParseMemtier reads the summary table of memtier_benchmark's text output
// (ALL STATS for one run, AGGREGATED AVERAGE RESULTS for several):
//
//	Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     p50 Latency     p99 Latency   p99.9 Latency       KB/sec
//	Sets        12144.10          ---          ---         0.08072         0.03900         1.13500         3.21500       887.90
//
// One row per type (Sets, Gets, Waits, Totals); "---" is absent. The
// columns are read by their header's names, not their places:
// --print-percentiles chooses the percentile columns (memtier issue #184
// shows an extra "p99.990 Latency"), and memtier before 1.3 printed one
// "Latency" column, the average, and no percentiles. A percentile the
// table does not have is left zero (absent).
func ParseMemtier(r io.Reader) ([]Row, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var rows []Row
	var cols map[string]int
	in := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "ALL STATS" || strings.HasPrefix(line, "AGGREGATED AVERAGE RESULTS"):
			in, rows, cols = true, nil, nil
		case in && strings.HasPrefix(line, "Type "):
			cols = memtierColumns(line)
		case in && strings.HasPrefix(line, "---"), in && strings.HasPrefix(line, "==="):
		case in && line == "":
			in = len(rows) == 0
		case in:
			row, err := memtierRow(cols, strings.Fields(line))
			if err != nil {
				return nil, err
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("memtier_benchmark: no ALL STATS or AGGREGATED AVERAGE table in its output")
	}
	return rows, sc.Err()
}

// memtierColumns maps a header's column names to their fields: "Avg.
// Latency" and "p99.9 Latency" are one column each.
func memtierColumns(header string) map[string]int {
	cols := map[string]int{}
	f := strings.Fields(header)
	for i := 0; i < len(f); i++ {
		name := f[i]
		if i+1 < len(f) && f[i+1] == "Latency" && (name == "Avg." || percentileLabel.MatchString(name)) {
			name += " Latency"
			i++
		}
		cols[name] = len(cols)
	}
	return cols
}

var percentileLabel = regexp.MustCompile(`^p[0-9.]+$`)

// memtierFigures are the columns a Row takes, by header name.
var memtierFigures = []struct {
	col string
	set func(*Row, float64)
}{
	{"Ops/sec", func(r *Row, v float64) { r.RPS = v }},
	{"Avg. Latency", func(r *Row, v float64) { r.Avg = v }},
	{"Latency", func(r *Row, v float64) { r.Avg = v }}, // before percentiles: the average
	{"p50 Latency", func(r *Row, v float64) { r.P50 = v }},
	{"p50.00 Latency", func(r *Row, v float64) { r.P50 = v }},
	{"p95 Latency", func(r *Row, v float64) { r.P95 = v }},
	{"p95.00 Latency", func(r *Row, v float64) { r.P95 = v }},
	{"p99 Latency", func(r *Row, v float64) { r.P99 = v }},
	{"p99.00 Latency", func(r *Row, v float64) { r.P99 = v }},
	{"p99.9 Latency", func(r *Row, v float64) { r.P999 = v }},
	{"p99.90 Latency", func(r *Row, v float64) { r.P999 = v }},
}

func memtierRow(cols map[string]int, f []string) (Row, error) {
	if cols == nil {
		return Row{}, fmt.Errorf("memtier_benchmark: a row before its table's Type header: %q", strings.Join(f, " "))
	}
	if _, ok := cols["Ops/sec"]; !ok || len(f) != len(cols) {
		return Row{}, fmt.Errorf("memtier_benchmark: %q: %d fields for %d columns, or no Ops/sec column", strings.Join(f, " "), len(f), len(cols))
	}
	row := Row{Test: f[0]}
	for _, fig := range memtierFigures {
		i, ok := cols[fig.col]
		if !ok || f[i] == "---" {
			continue
		}
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Row{}, fmt.Errorf("memtier_benchmark %s row, %s: %q is not a number", f[0], fig.col, f[i])
		}
		fig.set(&row, v)
	}
	return row, nil
}

func floats(s []string) ([]float64, error) {
	out := make([]float64, len(s))
	for i, x := range s {
		v, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", x)
		}
		out[i] = v
	}
	return out, nil
}

// Summary is a row as redline's summary: the figures the tool gave, the
// rest zero (no histogram: the tools print percentiles, not their
// histograms). requests is what the tool was asked for.
func (r Row) Summary(requests int64) *benchdata.Summary {
	s := &benchdata.Summary{Schema: benchdata.SchemaVersion, Title: r.Test, Requests: requests, RPS: r.RPS,
		Latency: benchdata.Latency{Avg: r.Avg, Min: r.Min, P50: r.P50, P95: r.P95, P99: r.P99, P999: r.P999, Max: r.Max}}
	if r.RPS > 0 {
		s.ElapsedSeconds = float64(requests) / r.RPS
	}
	return s
}
