package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"redline/internal/bench"
	"redline/internal/bench/cmdline"
)

// TestPlainProgressLineCoversItsInterval: the plain printer asks the
// engine for one progress call per line and prints every call, so a line
// covers the whole second since the previous one. It used to take calls
// every 250 ms and print one a second: the three in between were lost (a
// stall in them never appeared; a second with 2,516 replies printed rps=0).
func TestPlainProgressLineCoversItsInterval(t *testing.T) {
	var b bytes.Buffer
	p := &progressPrinter{mode: "plain", w: &b}
	if got := p.interval(); got != time.Second {
		t.Errorf("plain progress interval = %v, want 1s", got)
	}
	p.begin("SET")
	p.show(bench.Progress{Title: "SET", Elapsed: time.Second, Requests: 50000, IntervalRequests: 50000, IntervalRPS: 50000, OverallRPS: 50000, IntervalAvg: 0.4, IntervalP99: 0.9, IntervalMax: 1.2})
	p.show(bench.Progress{Title: "SET", Elapsed: 2 * time.Second, Requests: 52516, IntervalRequests: 2516, IntervalRPS: 2516, OverallRPS: 26258, IntervalAvg: 20.1, IntervalP99: 501, IntervalMax: 502.3})
	p.show(bench.Progress{Title: "SET", Elapsed: 2500 * time.Millisecond, Requests: 53000, IntervalRequests: 484, IntervalRPS: 968, OverallRPS: 21200, IntervalAvg: 0.5, IntervalP99: 0.9, IntervalMax: 1, Final: true})
	p.show(bench.Progress{Title: "SET", Elapsed: 2500 * time.Millisecond, Requests: 53000, Final: true}) // nothing new: no line
	p.end()
	want := "SET: 1.0s 50000 requests, rps=50000.0 (overall: 50000.0) avg_msec=0.400 p99_msec=0.900 max_msec=1.200\n" +
		"SET: 2.0s 52516 requests, rps=2516.0 (overall: 26258.0) avg_msec=20.100 p99_msec=501.000 max_msec=502.300\n" +
		"SET: 2.5s 53000 requests (the last 0.500s: 484), rps=968.0 (overall: 21200.0) avg_msec=0.500 p99_msec=0.900 max_msec=1.000\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("plain progress (-want +got):\n%s", d)
	}
	if tty := (&progressPrinter{mode: "tty"}).interval(); tty != 250*time.Millisecond {
		t.Errorf("tty progress interval = %v, want 250ms", tty)
	}
}

// TestProgressTellsTheTruth (issue 40): a warm-up line said "0 requests,
// rps=0.0" while load was sent, and the last line of a test covered a few
// milliseconds (10 requests) as if it were a second.
func TestProgressTellsTheTruth(t *testing.T) {
	var b bytes.Buffer
	p := &progressPrinter{mode: "plain", w: &b}
	p.begin("SET")
	p.show(bench.Progress{Title: "SET", Warmup: true, Elapsed: time.Second})
	p.show(bench.Progress{Title: "SET", Elapsed: time.Second, Requests: 50000, IntervalRequests: 50000, IntervalRPS: 50000, OverallRPS: 50000})
	p.show(bench.Progress{Title: "SET", Elapsed: 1004 * time.Millisecond, Requests: 50010, IntervalRequests: 10, IntervalRPS: 2500, OverallRPS: 49810, Final: true})
	want := "SET: warm-up 1.0s: load sent, not measured\n" +
		"SET: 1.0s 50000 requests, rps=50000.0 (overall: 50000.0) avg_msec=0.000 p99_msec=0.000 max_msec=0.000\n" +
		"SET: 1.0s 50010 requests (the last 0.004s: 10), rps=2500.0 (overall: 49810.0) avg_msec=0.000 p99_msec=0.000 max_msec=0.000\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("plain progress (-want +got):\n%s", d)
	}
}

// TestQuietProgressOffTerminal: with -q or --csv and no terminal, auto
// progress writes nothing (redis-benchmark -q's one line is overwritten in
// place; --csv has none); the default report still logs plain lines.
func TestQuietProgressOffTerminal(t *testing.T) {
	var out, errOut bytes.Buffer
	s := &streams{out: &out, err: &errOut}
	for _, c := range []struct {
		quiet, csv bool
		want       string
	}{{true, false, "none"}, {false, true, "none"}, {false, false, "plain"}} {
		f := &cmdline.Flags{Progress: "auto", Quiet: c.quiet, CSV: c.csv}
		if got := newProgressPrinter(s, f).mode; got != c.want {
			t.Errorf("-q=%v --csv=%v: progress %q, want %q", c.quiet, c.csv, got, c.want)
		}
	}
}
