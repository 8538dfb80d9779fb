package report

import (
	"strings"
	"testing"

	"redline/internal/benchdata"
	"redline/internal/change"
	"redline/internal/labdata"
)

// TestPlanOldEmptyValue: a reserved-ports step applied over an empty
// ip_local_reserved_ports read "? → 44593,54593"; the value tune read was
// empty, and is shown so. "?" stays where no value was read.
func TestPlanOldEmptyValue(t *testing.T) {
	c := change.Change{Kind: change.KindSysctl, Target: "net.ipv4.ip_local_reserved_ports", Value: "44593,54593"}
	if got := planRow(0, labdata.PlanStep{Change: c, Status: "applied"})[3]; got != `"" → 44593,54593` {
		t.Errorf("applied over an empty value: %q", got)
	}
	if got := planRow(0, labdata.PlanStep{Change: c, Status: "refused"})[3]; got != "? → 44593,54593" {
		t.Errorf("refused, never read: %q", got)
	}
	if got := planRow(0, labdata.PlanStep{Change: c, Old: "6379", Status: "applied"})[3]; got != "6379 → 44593,54593" {
		t.Errorf("applied over 6379: %q", got)
	}
}

// TestNoTwoGroupsFromOneRun: one run sharing a CPU against fourteen apart,
// 1.7% slower, was called "a likely cause of runs that fall into two
// groups" (issue 41). Two groups need two runs a side, every run of one
// beyond every run of the other, and medians 5% apart.
func TestNoTwoGroupsFromOneRun(t *testing.T) {
	for _, c := range []struct {
		name          string
		shared, apart []float64
		want          bool
	}{
		{"one against fourteen, 1.7% apart", []float64{98300}, []float64{100000, 100100, 99900, 100200, 99800, 100000, 100300, 99700, 100000, 100100, 99900, 100000, 100050, 99950}, false},
		{"one against fourteen, 30% apart", []float64{70000}, []float64{100000, 100100, 99900, 100200, 99800, 100000, 100300, 99700, 100000, 100100, 99900, 100000, 100050, 99950}, false},
		{"overlapping", []float64{95000, 101000, 99000}, []float64{100000, 98000, 102000}, false},
		{"apart but close", []float64{98000, 98500}, []float64{99000, 100000, 100500}, false},
		{"two groups", []float64{117000, 116000}, []float64{147000, 148000, 146000}, true},
	} {
		if got := twoGroups(c.shared, c.apart); got != c.want {
			t.Errorf("%s: two groups %v, want %v", c.name, got, c.want)
		}
	}
	res := &labdata.Result{Schema: labdata.ResultSchema}
	for i := range 15 {
		shared, rps := 0.0, 100000.0+float64(i%3)*100
		if i == 7 {
			shared, rps = 0.9, 98300
		}
		res.Runs = append(res.Runs, labdata.Run{Seq: i + 1, Variant: "baseline", Workload: "set",
			Summary: &benchdata.Summary{RPS: rps, Requests: 1000}, Noise: &labdata.Noise{SharedCPU: shared}})
	}
	if notes := strings.Join(noiseNotes(res), "\n"); strings.Contains(notes, "two groups") {
		t.Errorf("a two-groups hint from one run:\n%s", notes)
	}
}

// TestOneRunHasNoSpread: a report of one bench file showed a run-to-run
// spread of 0.0% (issue 41): with one run there is none, so the spread
// metric is left out and the spread column says n/a.
func TestOneRunHasNoSpread(t *testing.T) {
	src := mustLoad(t, "kernel-3.10.json")
	src.Bench.Results = src.Bench.Results[:1]
	r := mustMerge(t, []*Source{src}, MergeOptions{})
	for _, f := range []Format{Markdown, HTML} {
		out := string(render(t, r, f))
		if strings.Contains(out, "Run-to-run spread") || strings.Contains(out, "0.0%") {
			t.Errorf("%s of one run shows a spread:\n%s", f, out)
		}
	}
}

// TestScratchFindingMarked: a finding about the lab's own server says so
// in both formats (issue 41).
func TestScratchFindingMarked(t *testing.T) {
	res := &labdata.Result{Schema: labdata.ResultSchema, Complete: true,
		Findings: []labdata.Finding{{ID: "reserved-ports", Severity: "medium", Title: "The local port range covers the Redis ports", Scratch: "the lab picked the port"}}}
	for _, f := range []Format{Markdown, HTML} {
		out := string(render(t, FromResult(res, "result.json"), f))
		if !strings.Contains(out, "about the lab&#39;s own server, not applied: the lab picked the port") && !strings.Contains(out, "about the lab's own server, not applied: the lab picked the port") {
			t.Errorf("%s: the finding is not marked as the lab's own server's", f)
		}
	}
}
