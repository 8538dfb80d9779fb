package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/stats"
)

// TestFromResultUsesLabComparisons: the lab's own comparisons are the
// record; the report shows them as they are.
func TestFromResultUsesLabComparisons(t *testing.T) {
	res := mustLoad(t, "lab.json").Result
	r := FromResult(res, "lab.json")
	for _, c := range res.Comparisons {
		g := r.group(c.Workload, c.Variant)
		v := map[string]*Versus{"rps": g.VsThroughput, "p99_ms": g.VsP99}[c.Metric]
		if v == nil || v.ComputedBy != "lab" || v.Ratio != c.Ratio || v.CILow != c.CILow || v.Verdict != c.Verdict {
			t.Errorf("%s/%s/%s: shown %+v, lab recorded %+v", c.Workload, c.Variant, c.Metric, v, c)
		}
	}
	if anyContains(r.Notes, "†") {
		t.Errorf("a complete result needs no computed comparisons: %q", r.Notes)
	}
}

func TestFromResultPartial(t *testing.T) {
	r := FromResult(mustLoad(t, "lab-partial.json").Result, "lab-partial.json")
	for _, want := range []string{
		"did not finish", "of the 18 planned", "interrupted (SIGINT)",
		"Run #14 (tuned, set, rep 3) is left out of the statistics: interrupted",
		"not recorded as rolled back", "redline tune rollback",
		"marked † are not in the file",
		"Fewer usable runs than the 3 repetitions",
		"1 of its 3 planned changes were not applied",
	} {
		if !anyContains(r.Notes, want) {
			t.Errorf("notes lack %q:\n%s", want, strings.Join(r.Notes, "\n"))
		}
	}
	g := r.group("set", "tuned")
	if g.N != 2 || g.LeftOut != 1 || g.VsThroughput.ComputedBy != "report" || g.VsThroughput.Verdict != stats.VerdictTooFew {
		t.Errorf("tuned/set: N=%d left out=%d vs=%+v", g.N, g.LeftOut, g.VsThroughput)
	}
	if g.Requests != 40000 {
		t.Errorf("tuned/set counts %d requests, want only the two usable runs' 40000", g.Requests)
	}
}

// TestReadsV1Results: a file from before the schema recorded planned runs
// and the minimum-runs rule still renders, with the same table as a v2
// file of the same runs (both judged by the bootstrap of their time).
func TestReadsV1Results(t *testing.T) {
	old, cur := mustLoad(t, "lab-v1.json").Result, mustLoad(t, "lab-v2.json").Result
	if old.Schema != labdata.ResultSchemaV1 || cur.Schema != labdata.ResultSchemaV2 {
		t.Fatalf("schemas %q and %q", old.Schema, cur.Schema)
	}
	a, b := FromResult(old, "lab.json"), FromResult(cur, "lab.json")
	for i, w := range b.Workloads {
		for j, g := range w.Groups {
			if og := a.Workloads[i].Groups[j]; fmtVerdict(og.VsThroughput) != fmtVerdict(g.VsThroughput) || fmtCI(og.VsP99) != fmtCI(g.VsP99) {
				t.Errorf("%s/%s: v1 reads %s %s, v2 %s %s", w.Name, g.Label, fmtVerdict(og.VsThroughput), fmtCI(og.VsP99), fmtVerdict(g.VsThroughput), fmtCI(g.VsP99))
			}
		}
	}
}

func TestFromResultWithoutRuns(t *testing.T) {
	res := mustLoad(t, "lab.json").Result
	res.Runs, res.Comparisons, res.Complete = nil, nil, false
	r := FromResult(res, "lab.json")
	if len(r.Workloads) != 0 || !anyContains(r.Notes, "No run was measured") {
		t.Errorf("workloads %d notes %q", len(r.Workloads), r.Notes)
	}
	for _, f := range Formats {
		var b bytes.Buffer
		if err := Write(&b, r, f); err != nil || b.Len() == 0 {
			t.Errorf("%s: %v (%d bytes)", f, err, b.Len())
		}
	}
}

func TestCSVRows(t *testing.T) {
	r := FromResult(mustLoad(t, "lab-partial.json").Result, "lab-partial.json")
	rows, err := csv.NewReader(bytes.NewReader(render(t, r, CSV))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(r.Runs)+1 {
		t.Fatalf("%d rows, want a header and %d runs", len(rows), len(r.Runs))
	}
	want := "seq,variant,workload,rep,rps,avg_ms,p50_ms,p95_ms,p99_ms,p99_9_ms,max_ms,requests,errors,server_cpu_us_per_request,start"
	if got := strings.Join(rows[0], ","); !strings.HasPrefix(got, want) {
		t.Errorf("header %s", got)
	}
	last, leftOut := rows[len(rows)-1], slices.Index(rows[0], "left_out")
	if last[0] != "14" || leftOut < 0 || last[leftOut] != "interrupted" {
		t.Errorf("last row %v, want run 14 marked interrupted", last)
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"md": Markdown, "markdown": Markdown, ".html": HTML, "HTM": HTML, "csv": CSV, "json": JSON} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("pdf"); err == nil || !strings.Contains(err.Error(), "use md, html, csv, json or curves") {
		t.Errorf("pdf: %v", err)
	}
}

// TestFromResultSplitsMixedWorkloads: runs of one workload that measured
// different tests are not pooled.
func TestFromResultSplitsMixedWorkloads(t *testing.T) {
	res := mustLoad(t, "lab.json").Result
	for i := range res.Runs {
		res.Runs[i].Workload = "mixed"
	}
	r := FromResult(res, "lab.json")
	if got := rowNames(r); len(got) != 2 || got[0] != "mixed · SET" || got[1] != "mixed · GET" {
		t.Fatalf("rows %v, want one per test", got)
	}
	if g := r.Workloads[0].Group("tuned"); g.N != 3 || g.VsThroughput.ComputedBy != "report" {
		t.Errorf("tuned: N=%d %+v", g.N, g.VsThroughput)
	}
}

// TestPlannedRunsAreTheLabs: the report says how many runs the lab
// planned, as recorded (a -t set,get workload counts twice), and claims no
// plan for a file that did not record one.
func TestPlannedRunsAreTheLabs(t *testing.T) {
	res := mustLoad(t, "lab-partial.json").Result
	res.Planned = &labdata.PlannedRuns{Total: 30}
	if r := FromResult(res, "x.json"); !anyContains(r.Notes, "the 14 runs it measured of the 30 planned") {
		t.Errorf("notes %q", r.Notes)
	}
	res.Planned = nil
	if r := FromResult(res, "x.json"); !anyContains(r.Notes, "the 14 runs it measured.") {
		t.Errorf("notes %q", r.Notes)
	}
}
