package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"redline/internal/testutil"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/stats"
)

// TestLabVerdictsAgree runs the lab with 1, 2, 3 and 5 runs a side and
// checks that result.json, the report (Markdown and JSON) and the verdict
// the CLI prints tell the same story: below the design's RunsNeeded "too few runs"
// and no interval anywhere, from there on one verdict with its interval.
func TestLabVerdictsAgree(t *testing.T) {
	testutil.Heavy(t)
	dir := t.TempDir()
	scenario := filepath.Join(dir, "pin.yaml")
	os.WriteFile(scenario, []byte(`
name: pin
target: {kind: managed}
workloads:
  - name: set
    bench: redis-benchmark -t set -c 4 -n 2000 -r 1000 -q
variants:
  - name: baseline
    baseline: true
  - name: pinned
    client: {cpus: "0"}
doctor: false
`), 0o644)
	for _, n := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprintf("%d runs", n), func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprint(n))
			stdout, stderr, code := runCLI(t, context.Background(), nil, "lab", scenario, "--out", out, "--repetitions", fmt.Sprint(n), "--progress", "none")
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			res, err := labdata.ReadResult(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			c := rpsComparison(t, res)
			if want := n < res.Sequential.RunsNeeded; (c.Verdict == stats.VerdictTooFew) != want || c.HasCI == want {
				t.Fatalf("lab JSON: %d runs a side gave %q (interval %v)", n, c.Verdict, c.HasCI)
			}
			if p := res.Planned; p == nil || p.Total != 2*n {
				t.Errorf("planned runs %+v, want %d", p, 2*n)
			}
			checkCLIVerdict(t, stdout, c)
			checkReportJSON(t, filepath.Join(out, "result.json"), c)
			checkReportMarkdown(t, filepath.Join(out, "report.md"), c)
		})
	}
}

func rpsComparison(t *testing.T, res *labdata.Result) labdata.Comparison {
	t.Helper()
	for _, c := range res.Comparisons {
		if c.Metric == "rps" && c.Variant == "pinned" {
			return c
		}
	}
	t.Fatalf("no rps comparison in %+v", res.Comparisons)
	return labdata.Comparison{}
}

func checkCLIVerdict(t *testing.T, stdout string, c labdata.Comparison) {
	t.Helper()
	for _, line := range strings.Split(stdout, "\n") {
		if strings.Contains(line, "pinned") {
			if !strings.Contains(line+" ", " "+shortVerdicts[c.Verdict]+" ") || strings.Contains(line, "[") != c.HasCI || len(line) > 80 {
				t.Errorf("CLI prints %q; the lab recorded %q (interval %v)", line, c.Verdict, c.HasCI)
			}
			return
		}
	}
	t.Errorf("CLI printed no verdict for pinned:\n%s", stdout)
}

func checkReportJSON(t *testing.T, result string, c labdata.Comparison) {
	t.Helper()
	stdout, stderr, code := runCLI(t, context.Background(), nil, "report", result, "--format", "json")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	var rep struct {
		Workloads []struct {
			Groups []struct {
				Label string `json:"label"`
				Vs    *struct {
					Verdict string `json:"verdict"`
					HasCI   bool   `json:"has_ci"`
				} `json:"rps_vs_reference"`
			} `json:"groups"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Workloads[0].Groups {
		if g.Label == "pinned" {
			if g.Vs == nil || g.Vs.Verdict != c.Verdict || g.Vs.HasCI != c.HasCI {
				t.Errorf("report JSON has %+v; the lab recorded %q (interval %v)", g.Vs, c.Verdict, c.HasCI)
			}
			return
		}
	}
	t.Errorf("report JSON has no pinned group:\n%s", stdout)
}

func checkReportMarkdown(t *testing.T, path string, c labdata.Comparison) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	row := ""
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| set |") {
			row = line // the first is the throughput summary
			break
		}
	}
	if !strings.Contains(row, c.Verdict) {
		t.Errorf("report.md throughput row %q lacks the lab's verdict %q", row, c.Verdict)
	}
	for _, other := range []string{stats.VerdictTooFew, stats.LabWords.Unclear, stats.LabWords.Better, stats.LabWords.Worse} {
		if other != c.Verdict && strings.Contains(row, other) {
			t.Errorf("report.md throughput row %q also says %q", row, other)
		}
	}
	if c.Reason != "" && !strings.Contains(md, c.Reason) {
		t.Errorf("report.md does not say why %q: %q", c.Verdict, c.Reason)
	}
}
