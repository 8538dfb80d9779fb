package report

import (
	"encoding/csv"
	"io"
	"redline/internal/labdata"
	"strconv"
	"strings"
	"time"
)

// csvColumns is the CSV layout: one row per run, raw numbers (rps with two
// decimals, latencies in ms with three, CPU in µs per request).
var csvColumns = []struct {
	header string
	value  func(*Sample) string
}{
	{"seq", func(s *Sample) string { return itoa(s.Seq) }},
	{"variant", func(s *Sample) string { return s.Variant }},
	{"workload", func(s *Sample) string { return s.Workload }},
	{"rep", func(s *Sample) string { return itoa(s.Rep) }},
	{"rps", func(s *Sample) string { return fixed(s.RPS, 2) }},
	{"avg_ms", func(s *Sample) string { return fixed(s.Latency.Avg, 3) }},
	{"p50_ms", func(s *Sample) string { return fixed(s.Latency.P50, 3) }},
	{"p95_ms", func(s *Sample) string { return fixed(s.Latency.P95, 3) }},
	{"p99_ms", func(s *Sample) string { return fixed(s.Latency.P99, 3) }},
	{"p99_9_ms", func(s *Sample) string { return fixed(s.Latency.P999, 3) }},
	{"max_ms", func(s *Sample) string { return fixed(s.Latency.Max, 3) }},
	{"requests", func(s *Sample) string { return strconv.FormatInt(s.Requests, 10) }},
	{"errors", func(s *Sample) string { return strconv.FormatInt(s.Errors, 10) }},
	{"server_cpu_us_per_request", func(s *Sample) string { return optFixed(s.ServerCPUPerRequest, 3) }},
	{"start", func(s *Sample) string { return rfc3339(s.Start) }},
	{"source", func(s *Sample) string { return s.Source }},
	{"label", func(s *Sample) string { return s.Label }},
	{"row", func(s *Sample) string { return s.Row }},
	{"left_out", func(s *Sample) string { return s.Problem }},
	{"outside_cpu", func(s *Sample) string { return noiseField(s, func(n *labdata.Noise) float64 { return n.OutsideCPU }) }},
	{"steal", func(s *Sample) string { return noiseField(s, func(n *labdata.Noise) float64 { return n.Steal }) }},
	{"shared_cpu", func(s *Sample) string { return noiseField(s, func(n *labdata.Noise) float64 { return n.SharedCPU }) }},
	{"noisy", func(s *Sample) string {
		if s.Noise == nil {
			return ""
		}
		return s.Noise.Noisy
	}},
	{"rps_per_second", func(s *Sample) string {
		return seriesField(s.Series, func(x labdata.Second) float64 { return x.RPS }, 0)
	}},
	{"p99_ms_per_second", func(s *Sample) string {
		return seriesField(s.Series, func(x labdata.Second) float64 { return x.P99 }, 3)
	}},
}

func noiseField(s *Sample, f func(*labdata.Noise) float64) string {
	if s.Noise == nil {
		return ""
	}
	return fixed(f(s.Noise), 3)
}

// seriesField is one metric of a run's per-second series, ";"-separated.
func seriesField(xs []labdata.Second, f func(labdata.Second) float64, prec int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fixed(f(x), prec)
	}
	return strings.Join(parts, ";")
}

func fixed(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

// optFixed leaves an unmeasured value empty rather than writing 0.
func optFixed(v float64, prec int) string {
	if v <= 0 {
		return ""
	}
	return fixed(v, prec)
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// csvCell keeps a text cell (a variant or workload name from someone's
// scenario) from being read as a formula by a spreadsheet: one that
// starts with = + - @ or a tab or CR, and is not a number, gets a leading
// apostrophe, as OWASP's CSV-injection advice says.
func csvCell(v string) string {
	if v == "" || !strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return v
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v
	}
	return "'" + v
}

// WriteCSV writes one row per run, in the order the runs were taken.
func WriteCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	header := make([]string, len(csvColumns))
	for i, c := range csvColumns {
		header[i] = c.header
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, s := range r.Runs {
		row := make([]string, len(csvColumns))
		for i, c := range csvColumns {
			row[i] = csvCell(c.value(s))
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
