package cli

import (
	"strings"
	"testing"

	"redline/internal/autotune"
	"redline/internal/report"
	"redline/internal/target"
	"redline/internal/testutil/mdcheck"
)

// Issue 24, item 13: autotune's report.md takes its workload and server
// lines from the command line and its reasons from the session; each is
// text or a code span there, whatever it holds.
func TestAutotuneReportMarkdownHostile(t *testing.T) {
	const bad = "v`|</td><img src=x onerror=alert(1)>\n# h | x | y [a](javascript:alert(1))"
	o := &autotuneOptions{target: target.Spec{Workload: bad, ServerConfig: []string{bad, "hz 10"}}}
	s := autotune.Setting{Knob: bad, Value: bad}
	res := &autotune.Result{
		Trials:       []autotune.Trial{{N: 1, Setting: s, Against: autotune.Config{s}, Reason: bad}},
		Confirmation: &autotune.Confirmation{Config: autotune.Config{s}, Confirmed: true},
		Untested:     []autotune.Untested{{Setting: s, Reason: bad}},
	}
	var b strings.Builder
	if err := report.WriteAutotuneMarkdown(&b, autotuneReport(o, res, []string{bad})); err != nil {
		t.Fatal(err)
	}
	mdcheck.Check(t, b.String())
}
