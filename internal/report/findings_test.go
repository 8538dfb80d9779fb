package report

import (
	"strings"
	"testing"

	"redline/internal/change"
	"redline/internal/labdata"
)

// A cluster lab's findings name their node in every format that shows
// findings.
func TestFindingsNameTheirNode(t *testing.T) {
	res := labFixture(true)
	res.Findings = []labdata.Finding{
		{ID: "maxmemory", Severity: "low", Node: "127.0.0.1:7001 (primary, shard 2)", Title: "maxmemory is unset", Message: "maxmemory is 0"},
		{ID: "cluster-slot-balance", Severity: "medium", Title: "uneven slots", Message: "127.0.0.1:7000 serves 4461"},
	}
	r := FromResult(res, "lab.json")
	for _, f := range []Format{Markdown, HTML} {
		out := string(render(t, r, f))
		if !strings.Contains(out, "maxmemory</code> on node <code>127.0.0.1:7001 (primary, shard 2)</code>") && !strings.Contains(out, "`maxmemory` on node `127.0.0.1:7001 (primary, shard 2)`") {
			t.Errorf("%s: the node finding does not name its node", f)
		}
		if strings.Contains(out, "cluster-slot-balance` on node") || strings.Contains(out, "cluster-slot-balance</code> on node") {
			t.Errorf("%s: a cluster finding names a node", f)
		}
	}
}

// A cluster lab's applied Redis settings name the node each went to.
func TestPlanStepsNameTheirNode(t *testing.T) {
	res := labFixture(true)
	for _, n := range []string{"127.0.0.1:7000", "127.0.0.1:7001"} {
		res.Variants[1].Plan = append(res.Variants[1].Plan, labdata.PlanStep{
			Change: change.Change{Kind: change.KindRedisConfig, Target: "hz", Value: "33", Node: n}, Old: "10", Status: "restored"})
	}
	r := FromResult(res, "lab.json")
	for _, f := range []Format{Markdown, HTML} {
		out := string(render(t, r, f))
		for _, n := range []string{"127.0.0.1:7000", "127.0.0.1:7001"} {
			if !strings.Contains(out, "hz on "+n) {
				t.Errorf("%s: the applied hz does not name node %s", f, n)
			}
		}
	}
}
