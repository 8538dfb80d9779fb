package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/redisserver"
	"redline/internal/testutil"
)

// TestLabPreloadedClient runs write-up 004's pattern end to end: the load
// from redis-benchmark (client.tool) with a library preloaded on both
// ends, seen mapped in each load process and named in the report.
func TestLabPreloadedClient(t *testing.T) {
	testutil.NeedTools(t, "redis-benchmark")
	lib, err := redisserver.AllocatorLib("tcmalloc")
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	scenario := `name: preload
target: {kind: managed}
doctor: false
client: {tool: redis-benchmark}
workloads:
  - name: set
    bench: redis-benchmark -t set,get -c 4 -n 2000
variants:
  - name: baseline
    baseline: true
  - name: preloaded
    server: {env: {LD_PRELOAD: ` + lib + `}}
    client: {env: {LD_PRELOAD: ` + lib + `}}
repetitions: 1
`
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if _, errOut, code := runCLI(t, context.Background(), nil, "lab", file, "-o", out, "--progress", "none", "--trust-scenario"); code != 0 {
		t.Fatalf("lab: exit %d\n%s", code, errOut)
	}
	res, err := labdata.ReadResult(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 4 {
		t.Fatalf("%d runs, want 4", len(res.Runs))
	}
	for _, r := range res.Runs {
		preloaded := r.Variant == "preloaded"
		if r.Tool == nil || r.Tool.Name != "redis-benchmark" || r.Summary.RPS <= 0 || (len(r.Tool.Preloaded) == 1) != preloaded {
			t.Errorf("run %d (%s %s): tool %+v", r.Seq, r.Variant, r.Workload, r.Tool)
		}
		if !strings.Contains(strings.Join(r.Summary.CommandLine, " "), "redis-benchmark") {
			t.Errorf("run %d: command line %q", r.Seq, r.Summary.CommandLine)
		}
	}
	report, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"Measured by redis-benchmark, not redline bench", "preloaded into redis-benchmark"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
