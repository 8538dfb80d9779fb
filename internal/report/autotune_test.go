package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"redline/internal/labdata"
	"redline/internal/testutil/mdcheck"
)

// hostileAutotune is a session whose knob values and reasons hold markup,
// pipes, newlines and control characters.
func hostileAutotune() *Autotune {
	bd := func(mainPct float64) *labdata.Breakdown {
		return &labdata.Breakdown{Interval: 2 * time.Second,
			CPUs:   []labdata.CPUShare{{CPU: 0, User: 40, System: 30, Idle: 30}},
			Server: &labdata.ServerBreakdown{PID: 7, Threads: []labdata.ThreadShare{{TID: 7, Comm: "redis-server", ThreadCounters: labdata.ThreadCounters{UserPct: mainPct, SysPct: 20}}}, Total: labdata.ThreadCounters{UserPct: mainPct, SysPct: 20}}}
	}
	return &Autotune{
		Objective: "throughput (ratios are of requests/s)", Workload: "-t set -c 50 --duration 2s", Target: "a managed redis-server",
		Procedure: "Seed 1.", Goal: 0.03, Measurements: 120, Doctor: []string{"redis.hz = 50 screened first (from doctor rule <b>x</b>)"},
		Noise: AutotuneNoise{Rounds: 11, Sigma: 0.05, Detectable: 0.04, AA: "x1.000 [0.97, 1.03] (no clear change)"},
		Trials: []AutotuneTrial{
			{N: 1, Phase: "screen", Setting: `redis.hz = <script>alert(1)</script>`, Against: "baseline", Decision: "dropped",
				Reason: "a & b </td><img src=x> | c\nd \x1b[31m", Rounds: 15,
				Looks: []AutotuneLook{{Rounds: 10, Ratio: 0.98, CILow: 0.9, CIHigh: 1.1, HasCI: true}, {Rounds: 15, Ratio: 0.99, CILow: 0.95, CIHigh: 1.02, HasCI: true}}},
			{N: 2, Phase: "screen", Setting: "redis.slowlog-log-slower-than = 10000", Against: "baseline", Decision: "kept", InFinal: true,
				Reason: "its interval lies above 1", Rounds: 10, P99: "median 0.900 ms, at most 1.000 ms (bound 2 ms): within",
				Looks: []AutotuneLook{{Rounds: 10, Ratio: 1.4, CILow: 1.2, CIHigh: 1.6, HasCI: true}}},
		},
		Untested: []string{"server.allocator: applied by server-spec <b>"},
		Result:   "Confirmed: redis.slowlog-log-slower-than=10000 x1.4 [1.2, 1.6].", Confirmed: true,
		Baseline: bd(60), Plan: bd(80),
		BaselineCommands: []AutotuneCommand{{Command: "set", Calls: 1000, Usec: 3000}, {Command: "<b>|x", Calls: 2, Usec: 1}},
		PlanCommands:     []AutotuneCommand{{Command: "set", Calls: 1500, Usec: 1500}},
	}
}

// TestAutotuneHTML: the page is well-formed and self-contained, shows the
// hostile values as text, and holds the trajectory: a table row and a
// chart point per look, and the server-time breakdown of both.
func TestAutotuneHTML(t *testing.T) {
	a := hostileAutotune()
	var b bytes.Buffer
	if err := WriteAutotuneHTML(&b, a); err != nil {
		t.Fatal(err)
	}
	p := parsePage(t, b.Bytes())
	checkSelfContained(t, p)
	for _, id := range []string{"objective", "noise", "doctor", "result", "trajectory", "server-time"} {
		if !p.ids[id] {
			t.Errorf("no section %q", id)
		}
	}
	text := p.text.String()
	for _, want := range []string{`redis.hz = <script>alert(1)</script>`, "a & b </td><img src=x>", "server.allocator: applied by server-spec <b>", "(from doctor rule <b>x</b>)", "<b>|x", "baseline", "final plan", "80% of a CPU"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page's text does not hold %q", want)
		}
	}
	if p.count["svg"] != 1 || p.count["circle"] != 3 || p.svgTitle != 1 {
		t.Errorf("%d charts with %d points and %d titles; want the trajectory with one point a look (3)", p.count["svg"], p.count["circle"], p.svgTitle)
	}
	if n := strings.Count(b.String(), "<tr><td class=\"num\">1</td>"); n != 3 { // 2 looks in the trajectory, 1 rejected row
		t.Errorf("comparison 1 has %d rows; want its 2 looks and its rejection", n)
	}
}

// TestAutotuneMarkdown: the same content; every value is text (the one
// Markdown escaping, mdcheck), a cell stays on its line, control
// characters are printed.
func TestAutotuneMarkdown(t *testing.T) {
	var b bytes.Buffer
	if err := WriteAutotuneMarkdown(&b, hostileAutotune()); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	mdcheck.Check(t, s)
	for _, want := range []string{"## Trajectory", `| 1 | screen | redis.hz = \<script>alert(1)\</script> | baseline | 10 | ×0.980 | \[0.900, 1.100] |`, `a \& b \</td>\<img src=x> \| c d`, "## Where the server's time went", "| final plan | 1 | 100% of a CPU |", "| set | 1000 | 3.00 | 1500 | 1.00 |", "120 measurements."} {
		if !strings.Contains(s, want) {
			t.Errorf("Markdown has no %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "\x1b") {
		t.Error("a control character reached the Markdown")
	}
}
