package lab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"redline/internal/testutil"
	"slices"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/netns"
)

const tinyScenario = `
name: tiny
target: {kind: %s}
workloads:
  - name: setget
    bench: redis-benchmark -t set,get -c 4 -n 3000 -r 1000 -q
variants:
  - name: baseline
    baseline: true
  - name: hz50
    server: {config: ["hz 50"]}
  - name: split-cpus
    server: {cpus: "0"}
    client: {cpus: "1"}
repetitions: 3
`

func tiny(t *testing.T, kind string) labdata.Scenario {
	t.Helper()
	s, err := ParseScenario([]byte(strings.Replace(tinyScenario, "%s", kind, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLabManagedEndToEnd(t *testing.T) {
	t.Parallel() // waits on its own servers
	testutil.Heavy(t)
	path := filepath.Join(t.TempDir(), "result.json")
	var events []Event
	res, err := Execute(context.Background(), Options{Scenario: tiny(t, "managed"), ResultPath: path, Version: "test",
		Observer: func(e Event) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || len(res.Runs) != 3*3*2 {
		t.Fatalf("complete %v, %d runs; want 18", res.Complete, len(res.Runs))
	}
	// Interleaved: every round runs each variant once, in the order the
	// recorded seed gives for that round.
	for rep := 1; rep <= 3; rep++ {
		var seq, want []string
		for _, r := range res.Runs {
			if r.Rep == rep && strings.HasSuffix(r.Workload, "/SET") {
				seq = append(seq, r.Variant)
			}
		}
		for _, vi := range order(3, rep, res.Sequential.Seed) {
			want = append(want, res.Scenario.Variants[vi].Name)
		}
		if !slices.Equal(seq, want) {
			t.Errorf("round %d ran %v, want %v (seed %d)", rep, seq, want, res.Sequential.Seed)
		}
	}
	for _, r := range res.Runs {
		if r.Summary.Requests != 3000 || r.ServerCPUPerRequest <= 0 {
			t.Errorf("run %d: %d requests, %.2f us/request of server CPU", r.Seq, r.Summary.Requests, r.ServerCPUPerRequest)
		}
	}
	if p := res.Planned; p == nil || p.Total != 18 || len(p.Groups) != 3*2 || p.Groups[0] != (labdata.PlannedGroup{Variant: "baseline", Workload: "setget/SET", Runs: 3}) {
		t.Errorf("planned runs %+v, want 18 in 6 groups of 3 (the two tests of setget count)", p)
	}
	if len(res.Comparisons) != 2*2*3 {
		t.Errorf("%d comparisons, want 12 (2 variants x 2 tests x 3 metrics)", len(res.Comparisons))
	}
	for _, c := range res.Comparisons {
		n := 3
		if c.Metric == "rps_spread" {
			n = 1 // one pair of runs
		}
		if c.N != n || c.BaselineN != n || c.CILow > c.CIHigh || c.Verdict == "" || c.Reason == "" {
			t.Errorf("comparison %+v", c)
		}
	}
	back, err := labdata.ReadResult(path)
	if err != nil || len(back.Runs) != 18 || !back.Complete || back.Runs[0].Summary.Histogram == nil {
		t.Fatalf("results file: %v", err)
	}
	// Three server settings (baseline, hz50, split-cpus) were started twice
	// each in the interleaved order, plus the first start: every log kept.
	if len(res.Target.Logs) < 3 {
		t.Errorf("server logs kept: %v", res.Target.Logs)
	}
	for _, p := range res.Target.Logs {
		if b, err := os.ReadFile(p); err != nil || !strings.Contains(string(b), "Ready to accept connections") {
			t.Errorf("log %s: %v", p, err)
		}
		// in logs/, not beside the reports (issue 41)
		if filepath.Dir(p) != filepath.Join(filepath.Dir(path), LogsDir) {
			t.Errorf("log %s is not in the results' %s/", p, LogsDir)
		}
	}
	if res.Target.Kind != "managed" || res.Target.ServerVersion == "" || res.Host.CPUs == 0 {
		t.Errorf("provenance: %+v %+v", res.Target, res.Host)
	}
	if len(events) < 18 || events[len(events)-1].Run != 18 {
		t.Errorf("%d progress events", len(events))
	}
}

func TestLabNetnsTarget(t *testing.T) {
	testutil.Heavy(t)
	s := tiny(t, "netns")
	s.Variants = s.Variants[:2]
	s.Repetitions = 2
	res, err := Execute(context.Background(), Options{Scenario: s})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 2*2*2 || !strings.HasPrefix(res.Target.Address, "10.77.0.1:") || !strings.Contains(res.Target.Topology, "veth") {
		t.Fatalf("%d runs against %+v", len(res.Runs), res.Target)
	}
	// The namespaces are gone afterwards (this process's: other test
	// binaries on a shared machine make rl-PID-* pairs at the same time).
	entries, _ := os.ReadDir(netns.Dir)
	mine := fmt.Sprintf("rl-%d-", os.Getpid())
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), mine) {
			t.Errorf("namespace %s left behind", e.Name())
		}
	}
}

func TestLabInterruptKeepsPartialResults(t *testing.T) {
	testutil.Heavy(t)
	s := tiny(t, "managed")
	s.Workloads[0].Bench = "-t set -c 2 --duration 300ms"
	s.Repetitions = 20
	path := filepath.Join(t.TempDir(), "result.json")
	// Interrupted once a run has been measured (a fixed 1.5 s deadline
	// came before the first run on a loaded machine).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := Execute(ctx, Options{Scenario: s, ResultPath: path, Observer: func(e Event) {
		if e.Summary != nil {
			cancel()
		}
	}})
	if err == nil || res.Complete {
		t.Fatalf("interrupted run: err %v complete %v", err, res.Complete)
	}
	back, rerr := labdata.ReadResult(path)
	if rerr != nil || back.Complete || len(back.Runs) == 0 || back.Error != "interrupted" {
		t.Fatalf("partial file: %v, %+v", rerr, back)
	}
}

func TestLabAddressTargetRefusesServerVariants(t *testing.T) {
	_, err := ParseScenario([]byte("name: x\ntarget: {kind: address, address: '127.0.0.1:1'}\nworkloads: [{name: a, bench: -t set}]\nvariants: [{name: b, baseline: true}, {name: c, server: {config: [x]}}]\n"))
	if err == nil || !strings.Contains(err.Error(), "cannot restart a server it did not start") {
		t.Fatal(err)
	}
}

// TestLabAllocatorVariants swaps the server's allocator with the OS
// packages' jemalloc, tcmalloc and mimalloc and checks each was loaded.
func TestLabAllocatorVariants(t *testing.T) {
	t.Parallel() // waits on its own servers
	testutil.Heavy(t)
	s, err := ParseScenario([]byte(`
name: allocators
workloads: [{name: set, bench: "-t set -c 4 -n 2000 -r 1000 -d 512"}]
variants:
  - {name: jemalloc, baseline: true, server: {allocator: jemalloc}}
  - {name: tcmalloc, server: {allocator: tcmalloc}}
  - {name: mimalloc, server: {allocator: mimalloc}}
repetitions: 1
`))
	if err != nil {
		t.Fatal(err) // CI installs libtcmalloc-minimal4 and libmimalloc2.0
	}
	res, err := Execute(context.Background(), Options{Scenario: s})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 {
		t.Fatalf("%d runs", len(res.Runs))
	}
	for _, v := range res.Variants {
		if !strings.Contains(v.Description, "allocator "+v.Name) {
			t.Errorf("variant %s described as %q", v.Name, v.Description)
		}
	}
	_, err = ParseScenario([]byte("name: x\nworkloads: [{name: a, bench: -t set}]\nvariants: [{name: b, baseline: true, server: {allocator: hoard}}]\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown allocator "hoard"`) {
		t.Errorf("unknown allocator: %v", err)
	}
}

// A variant that asks for the doctor's fixes with the doctor off must say
// so before anything runs, not silently apply nothing.
func TestLabDoctorFixesNeedTheDoctor(t *testing.T) {
	no := false
	s := tiny(t, "managed")
	s.Doctor = &no
	s.Variants = append(s.Variants[:1], labdata.VariantSpec{Name: "fixes", Tune: &labdata.TuneSpec{Doctor: true}})
	res, err := Execute(context.Background(), Options{Scenario: s, Tuner: &fakeTuner{}, Doctor: fakeDoctor{}})
	if err == nil || !strings.Contains(err.Error(), "the doctor is off") || len(res.Runs) != 0 {
		t.Fatalf("err %v, %d runs", err, len(res.Runs))
	}
}
