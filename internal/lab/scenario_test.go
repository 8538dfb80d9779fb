package lab

import (
	"path/filepath"
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
	}
	for _, c := range cases {
		_, err := ParseScenario([]byte(c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.yaml, err, c.want)
		}
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
