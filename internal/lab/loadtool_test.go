package lab

import (
	"strings"
	"testing"
)

func TestScenarioToolAndBuildChecks(t *testing.T) {
	head := "name: x\ntarget: {kind: managed}\nworkloads: [{name: w, bench: -t set -n 1000}]\n"
	cases := []struct{ yaml, err string }{
		{head + "client: {tool: redis-benchmark}\nvariants: [{name: b}, {name: p, client: {env: {LD_PRELOAD: /x.so}}}]\n", ""},
		{head + "client: {tool: redline}\nvariants: [{name: b}]\n", ""},
		{head + "client: {tool: wrk}\nvariants: [{name: b}]\n", "redline (the default) or redis-benchmark"},
		{head + "client: {tool: memtier_benchmark}\nvariants: [{name: b}]\n", "not packaged in Debian 12"},
		{head + "variants: [{name: b}, {name: p, client: {tool: redis-benchmark}}]\n", "no verdict mixes tools"},
		{head + "variants: [{name: b}, {name: p, client: {env: {LD_PRELOAD: /x.so}}}]\n", "needs client.tool"},
		{"name: x\ntarget: {kind: managed}\nclient: {tool: redis-benchmark}\nworkloads: [{name: w, bench: -t set --duration 2s}]\nvariants: [{name: b}]\n", "no --duration"},
		{head + "variants: [{name: b}, {name: o3, server: {build: {source: debian, opt: -O3}}}]\n", ""},
		{head + "variants: [{name: b}, {name: o3, server: {binary: /x, build: {source: debian}}}]\n", "binary or build, not both"},
		{head + "variants: [{name: b}, {name: o3, server: {build: {source: debian, cflags: [\"-O2 ;id\"]}}}]\n", "not a compiler flag"},
		{"name: x\ntarget: {kind: address, address: \"10.0.0.1:6379\"}\nworkloads: [{name: w, bench: -t set}]\nvariants: [{name: b}, {name: o3, server: {build: {source: debian}}}]\n", "needs a target whose server redline starts"},
	}
	for _, c := range cases {
		_, err := ParseScenario([]byte(c.yaml))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.yaml, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: got %v, want %q", c.yaml, err, c.err)
		}
	}
}
