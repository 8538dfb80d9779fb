package doctor

import (
	"strings"
	"testing"

	"redline/internal/change"
	"redline/internal/host"
	"redline/internal/testutil/mdcheck"
)

// Issue 24, item 13: the doctor's Markdown put what a host or a server
// said (a CONFIG value, a node's error, a path, a reason) into text,
// code spans and tables as it was: a backtick broke the evidence's code
// span, a pipe the table, and raw HTML reached whoever viewed the
// report. Each now shows as text.
func TestMarkdownHostileValues(t *testing.T) {
	const (
		html = "<script>alert(1)</script>"
		bad  = "v`|</td><img src=x onerror=alert(1)>\n# heading\r\n| a | b |\x1b[31m [x](javascript:alert(1))"
	)
	rep := &Report{
		Target:     Target{Live: true, Redis: bad, Version: html, Local: true, Pid: 1},
		Nodes:      []Node{{Addr: bad, Role: "primary", Shard: 1, Error: bad}},
		ReadErrors: []host.SourceError{{Source: bad, Path: html, Error: bad}},
		Findings: []Finding{
			{ID: "maxmemory", Severity: High, Status: Fired, Title: html, Message: bad, Why: bad, Source: bad,
				Evidence: []Evidence{{Source: bad, Value: "```\n" + bad, Note: bad}, {Source: "CONFIG GET hz", Value: "a``b"}},
				Notes:    []string{bad},
				Fix: &Fix{Caution: bad, Advice: []string{bad}, Persist: []string{"echo ```", bad},
					Changes: []change.Change{{Kind: change.KindRedisConfig, Target: "hz", Value: "1\n```\n" + html}},
					Undo:    []change.Change{{Kind: change.KindRedisConfig, Target: "hz", Value: bad}}}},
			{ID: "slowlog-off", Status: NotChecked, Reason: bad},
			{ID: "latency-monitor-off", Status: Errored, Reason: html},
		},
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, rep, RenderOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if strings.Contains(md, "\x1b") {
		t.Error("a control character reached the Markdown")
	}
	mdcheck.Check(t, md)
}
