package lab

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseScenarioStrict(t *testing.T) {
	good := `
name: kernels
target: {kind: managed}
workloads:
  - name: setget
    bench: redis-benchmark -t set,get -c 32 -n 500000 -r 500000 --threads 6 -l -q --csv -h 192.168.100.2
variants:
  - name: baseline
    baseline: true
  - name: io2
    server: {config: ["io-threads 2"]}
repetitions: 3
warmup: 2s
`
	s, err := ParseScenario([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if s.Repetitions != 3 || s.Warmup.Seconds() != 2 || len(s.Variants) != 2 || s.Variants[1].Server.Config[0] != "io-threads 2" {
		t.Errorf("parsed %+v", s)
	}
	cases := []struct{ yaml, want string }{
		{"name: x\nworkloads:\n  - name: a\n    bench: -t set\n    clinets: 5\n", "line 5: field clinets not found"},
		{"name: x\nrepetitions: lots\n", "line 2"},
		{"name: x\nworkloads:\n  - name: a\n    bench: -c x\n", "line 4: workloads.0.bench"},
		{"name: x\ntarget: {kind: cloud}\nworkloads: [{name: a, bench: -t set}]\n", `line 2: target.kind: "cloud"`},
		{"name: x\ntarget: {kind: address}\nworkloads: [{name: a, bench: -t set}]\n", "target.address: required"},
		{"name: x\nworkloads: [{name: a, bench: -t set}]\nvariants:\n  - {name: a, baseline: true}\n  - {name: b, baseline: true}\n", "exactly one variant must be the baseline"},
		{"name: x\ntarget: {kind: address, address: 'h:1'}\nworkloads: [{name: a, bench: -t set}]\nvariants:\n  - {name: a}\n  - {name: b, server: {config: [x]}}\n", "line 6: variants.1.server"},
		{"", "empty scenario"},
		{"name: x\nworkloads: [{name: a, bench: -t set, sweep: {q: [1]}}]\n", `workloads.0.sweep: "q" is not d, c, P or threads`},
		{"name: x\nworkloads: [{name: a, bench: -t set, sweep: {d: [1], c: [2]}}]\n", "sweeps one parameter"},
		{"name: x\nworkloads: [{name: a, bench: -t set, sweep: {c: [many]}}]\n", "c=many"},
		{"name: x\nworkloads: [{name: a, bench: -t set}]\nmin_runs: 9\nmax_runs: 4\n", "min_runs: 9 is more than max_runs 4"},
		{"name: x\nworkloads: [{name: a, bench: -t set}]\nprecision: lots\n", "not a fraction or a percentage"},
		{"name: x\ntarget: {kind: ssh}\nworkloads: [{name: a, bench: -t set}]\n", "target.host"},
		{"name: x\ntarget: {kind: ssh, host: '-oProxyCommand=x'}\nworkloads: [{name: a, bench: -t set}]\n", "target.host"},
		{"name: x\ntarget: {kind: ssh, host: a, address: redis-a}\nworkloads: [{name: a, bench: -t set}]\n", "an IP address of the server host"},
		{"name: x\ntarget: {kind: ssh, host: a, heartbeat: 1ms}\nworkloads: [{name: a, bench: -t set}]\n", "target.heartbeat"},
		{"name: x\ntarget: {kind: ssh, host: a, port: 6379}\nworkloads: [{name: a, bench: -t set}]\nvariants:\n  - {name: a}\n  - {name: b, server: {cpus: '1'}}\n", "variants.1.server"},
		{"name: x\ntarget: {kind: ssh, host: a}\nworkloads: [{name: a, bench: -t set}]\nvariants:\n  - {name: a}\n  - {name: b, server: {env: {A: b}}}\n", "variants.1.server.env"},
		{"name: x\ntarget: {kind: managed, host: a}\nworkloads: [{name: a, bench: -t set}]\n", "for kind: ssh"},
		{"name: x\nclient: {workers: 3}\nworkloads: [{name: a, bench: -t set -c 2}]\n", "workloads.0.bench: with client.workers: --workers 3 needs at least one client each"},
		{"name: x\nclient: {worker_hosts: [a]}\nworkloads: [{name: a, bench: -t set}]\n", "client.worker_hosts: the load from other hosts needs a server they reach"},
		{"name: x\ntarget: {kind: address, address: '127.0.0.1:6379'}\nclient: {worker_hosts: [a]}\nworkloads: [{name: a, bench: -t set}]\n", "this host's loopback"},
		{"name: x\ntarget: {kind: ssh, host: s}\nclient: {worker_hosts: [a, '-x'], workers: 2}\nworkloads: [{name: a, bench: -t set}]\n", "client.worker_hosts.1"},
		{"name: x\ntarget: {kind: ssh, host: s}\nclient: {worker_hosts: [a, b, c]}\nworkloads: [{name: a, bench: -t set -c 2}]\n", "--workers 3 needs at least one client each"},
		{"name: x\nclient: {workers: 65}\nworkloads: [{name: a, bench: -t set}]\n", "client.workers: 65 is not in 0..64"},
		{"name: x\nclient: {workers: -1}\nworkloads: [{name: a, bench: -t set}]\n", "client.workers: -1"},
		{"name: x\nworkloads: [{name: a, bench: -t set}]\nvariants:\n  - {name: a, baseline: true}\n  - {name: b, client: {workers: 2}}\n", "variants.1.client.workers"},
	}
	for _, c := range cases {
		_, err := ParseScenario([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.yaml, err, c.want)
		}
	}
}

// TestAdaptiveScenario: precision as a percentage, a budget, a sweep; the
// design it resolves to.
func TestAdaptiveScenario(t *testing.T) {
	s, err := ParseScenario([]byte(`
name: sizes
workloads:
  - name: values
    bench: -t set,get -c 50 -r 100000 --duration 1s
    sweep: {d: [3, 3000]}
variants:
  - name: baseline
  - name: io2
    server: {config: ["io-threads 2"]}
precision: 3%
budget: 10m
min_runs: 6
max_runs: 20
`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Precision != 0.03 || s.Budget.Minutes() != 10 || s.Repetitions != 0 {
		t.Errorf("parsed %+v", s)
	}
	var names []string
	for _, pt := range sweepPoints(s.Workloads[0]) {
		line, name := sweepLine(s.Workloads[0], pt)
		names = append(names, name+": "+line)
	}
	if want := "values[d=3]: -t set,get -c 50 -r 100000 --duration 1s -d 3|values[d=3000]: -t set,get -c 50 -r 100000 --duration 1s -d 3000"; strings.Join(names, "|") != want {
		t.Errorf("sweep %q", names)
	}
	q := design(s, 4, 0) // 2 sweep points x 2 tests
	// 12 comparisons: a paired claim needs 10 rounds at 2 looks, so the
	// looks start there, not at min_runs.
	if q.MinRuns != 6 || q.MaxRuns != 20 || q.Comparisons != 4*1*3 || q.Budget.Minutes() != 10 || q.Precision != 0.03 ||
		!q.Paired || q.RunsNeeded != 10 || !slices.Equal(q.Looks, []int{11, 20}) {
		t.Errorf("design %+v", q)
	}
	fixed, _ := ParseScenario([]byte("name: x\nworkloads: [{name: a, bench: -t set}]\nrepetitions: 5\n"))
	// 5 rounds are too few for a paired claim (2^-5 > level/2): runs are
	// compared as groups.
	if q := design(fixed, 1, 0); q.MinRuns != 5 || q.MaxRuns != 5 || q.Budget != 0 || len(q.Looks) != 1 || q.Paired {
		t.Errorf("fixed design %+v", q)
	}
}

// TestExampleScenariosParse keeps the shipped examples valid.
func TestExampleScenariosParse(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.yaml")
	if len(files) < 4 {
		t.Fatalf("found %d example scenarios", len(files))
	}
	for _, f := range files {
		if _, err := LoadScenario(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}
