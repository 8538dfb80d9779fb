package report

import (
	"encoding/json"
	"strings"
	"testing"

	"redline/internal/change"
	"redline/internal/labdata"
	"redline/internal/testutil/mdcheck"
)

// hostileMD are values a result.json from someone else (its host's
// answers, its server's CONFIG values, its scenario's names) can carry
// into report.md: HTML, backticks, table pipes, line breaks, controls,
// links.
const (
	hostileName  = "<script>alert(1)</script>|x`y"
	hostileValue = "v`|</td><img src=x onerror=alert(1)>\n# heading\r\n| a | b |\x1b[31m"
	hostileLink  = "[click](javascript:alert(1)) <https://evil.example> ![i](x.png)"
)

// Issue 24, item 13: a lab result's names, values and reasons went into
// report.md as they were, so a variant named <script>... or a CONFIG
// value with a backtick or a pipe added HTML or broke a code span or a
// table. Each now shows as text.
func TestMarkdownReportHostileValues(t *testing.T) {
	res := labFixture(true)
	// Rename a variant and a workload everywhere they appear.
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	s := strings.ReplaceAll(string(b), `"tuned"`, q(hostileName))
	s = strings.ReplaceAll(s, `"set"`, q(hostileValue))
	res = nil
	if err := json.Unmarshal([]byte(s), &res); err != nil {
		t.Fatal(err)
	}
	res.Scenario.Description = hostileValue + hostileLink
	res.Host.Hostname, res.Host.Notes = hostileValue, []string{hostileLink}
	res.Target.Address, res.Target.Binary = hostileValue, hostileName
	res.Scenario.Server.Config = []string{hostileValue}
	res.Findings = append(res.Findings, labdata.Finding{ID: hostileName, Severity: hostileValue, Node: hostileValue, Title: hostileLink, Message: hostileValue,
		Evidence: []string{hostileValue, "a``b"}, Fix: []string{hostileValue}})
	res.Variants[1].Description = hostileLink
	res.Variants[1].Notes = []string{hostileValue}
	res.Variants[1].Plan = append(res.Variants[1].Plan, labdata.PlanStep{
		Change: change.Change{Kind: change.KindRedisConfig, Target: "hz", Value: hostileValue, Why: hostileLink, Rule: hostileName, Node: hostileValue},
		Old:    hostileValue, Status: hostileName, Note: hostileValue})
	res.Variants[2].Server = []string{hostileValue}
	res.Error = hostileValue
	md := string(render(t, FromResult(res, hostileName), Markdown))
	if strings.Count(md, "\x1b") > 0 {
		t.Error("a control character reached report.md")
	}
	for _, bad := range []string{"<script>alert", "<img src", "](javascript:"} {
		for i := 0; i < len(md); {
			j := strings.Index(md[i:], bad)
			if j < 0 {
				break
			}
			i += j
			if md[i-1] != '\\' && !insideCode(md, i) {
				t.Errorf("report.md holds %q unescaped, outside a code span: %s", bad, md[max(0, i-60):min(len(md), i+60)])
			}
			i++
		}
	}
	mdcheck.Check(t, md)
}

// insideCode says whether md[i] is inside a code span of its line, as
// CommonMark finds them: a run of n backticks (not escaped) up to the
// next run of exactly n.
func insideCode(md string, i int) bool {
	start := strings.LastIndexByte(md[:i], '\n') + 1
	end := strings.IndexByte(md[i:], '\n')
	if end < 0 {
		end = len(md) - i
	}
	line, at := md[start:i+end], i-start
	run := func(j int) int {
		k := j
		for k < len(line) && line[k] == '`' {
			k++
		}
		return k - j
	}
	for j := 0; j < len(line); {
		switch {
		case line[j] == '\\':
			j += 2
		case line[j] == '`':
			n := run(j)
			k := j + n
			for k < len(line) {
				if line[k] == '`' {
					m := run(k)
					if m == n {
						break
					}
					k += m
					continue
				}
				k++
			}
			if k < len(line) && j < at && at < k {
				return true
			}
			if k >= len(line) {
				j += n // no closing run: literal backticks
			} else {
				j = k + n
			}
		default:
			j++
		}
	}
	return false
}
