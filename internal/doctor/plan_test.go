package doctor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"redline/internal/change"
)

func sysctl(target, value string) change.Change {
	return change.Change{Kind: change.KindSysctl, Target: target, Value: value}
}

// planReport has a duplicate target, a caution, a service change, advice
// and a finding that did not fire; its order is not by severity.
func planReport() *Report {
	return &Report{Target: Target{Redis: "127.0.0.1:6379"}, Findings: []Finding{
		{ID: "b", Status: Fired, Severity: Low, Fix: &Fix{Changes: []change.Change{sysctl("x", "3"), sysctl("y", "1")}}},
		{ID: "a", Status: Fired, Severity: High, Fix: &Fix{Changes: []change.Change{sysctl("x", "2")}}},
		{ID: "c", Status: Fired, Severity: Medium, Fix: &Fix{Caution: "durability",
			Changes: []change.Change{{Kind: change.KindRedisConfig, Target: "appendfsync", Value: "everysec"}}}},
		{ID: "s", Status: Fired, Severity: Medium, Fix: &Fix{Changes: []change.Change{{Kind: change.KindService, Target: "irqbalance", Value: "inactive"}},
			Advice: []string{"disable it at boot"}}},
		{ID: "d", Status: OK, Fix: &Fix{Changes: []change.Change{sysctl("z", "1")}}},
	}}
}

func TestPlanPolicy(t *testing.T) {
	rule := func(c change.Change, r string) change.Change { c.Rule = r; return c }
	aof := change.Change{Kind: change.KindRedisConfig, Target: "appendfsync", Value: "everysec", Rule: "c"}
	irqb := change.Change{Kind: change.KindService, Target: "irqbalance", Value: "inactive", Rule: "s"}
	cases := []struct {
		name  string
		o     PlanOptions
		want  []change.Change
		notes []string
		redis string
	}{
		{"reviewed info", ReviewedPlan(Info),
			[]change.Change{rule(sysctl("x", "2"), "a"), aof, irqb, rule(sysctl("y", "1"), "b")},
			[]string{"c: durability", "s: disable it at boot", "sysctl x from b dropped: another finding already sets it"},
			"127.0.0.1:6379"},
		{"reviewed high", ReviewedPlan(High), []change.Change{rule(sysctl("x", "2"), "a")}, nil, ""},
		{"no cautions", PlanOptions{MinSeverity: Info},
			[]change.Change{rule(sysctl("x", "2"), "a"), irqb, rule(sysctl("y", "1"), "b")},
			[]string{"c: left out (caution: durability)", "s: disable it at boot", "sysctl x from b dropped: another finding already sets it"},
			""},
		{"unattended", UnattendedPlan, []change.Change{rule(sysctl("x", "2"), "a")},
			[]string{"c: left out (caution: durability)", "service irqbalance from s left out: service changes are not taken here", "s: disable it at boot"},
			""},
	}
	for _, tc := range cases {
		got := planReport().Plan(tc.o)
		if d := cmp.Diff(tc.want, got.Changes); d != "" {
			t.Errorf("%s: changes (-want +got):\n%s", tc.name, d)
		}
		if d := cmp.Diff(tc.notes, got.Notes); d != "" {
			t.Errorf("%s: notes (-want +got):\n%s", tc.name, d)
		}
		if got.Redis != tc.redis {
			t.Errorf("%s: redis %q, want %q", tc.name, got.Redis, tc.redis)
		}
	}
}

// A saved report gives the plan the report in memory gives.
func TestPlanOfSavedReport(t *testing.T) {
	rep := planReport()
	var b bytes.Buffer
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !IsReportJSON(b.Bytes()) {
		t.Fatal("WriteJSON output not recognised as a report")
	}
	saved, err := ReadReport(&b)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []PlanOptions{ReviewedPlan(Info), ReviewedPlan(Medium), UnattendedPlan} {
		if d := cmp.Diff(rep.Plan(o), saved.Plan(o)); d != "" {
			t.Errorf("%+v: saved report plans differently (-memory +saved):\n%s", o, d)
		}
	}
}

func TestReadReportErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{"schema": 99, "findings": []}`:         "schema 99",
		`{"findings": [`:                         "not a redline doctor --json report",
		`{"findings": [{"severity": "urgent"}]}`: "unknown severity",
	} {
		if _, err := ReadReport(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadReport(%s) = %v, want %q", in, err, want)
		}
	}
}

// A change planned from a counter read once (its total since boot) gets a
// note saying so (issue 41: netdev_budget was planned from one LOW
// softnet-squeeze sample without a word).
func TestPlanNotesOneSampleCounters(t *testing.T) {
	rep := &Report{Findings: []Finding{
		{ID: "softnet-squeeze", Status: Fired, Severity: Low, Message: "12 rounds squeezed since boot (one sample: run with --sample to see whether it is still rising)",
			Fix: &Fix{Changes: []change.Change{sysctl("net.core.netdev_budget", "600")}}},
		{ID: "tw-buckets", Status: Fired, Severity: Low, Message: "TIME_WAIT overflowed",
			Evidence: []Evidence{{Source: "/proc/net/netstat", Value: "3", Note: "in the sample window"}},
			Fix:      &Fix{Changes: []change.Change{sysctl("net.ipv4.tcp_max_tw_buckets", "2")}}},
	}}
	got := rep.Plan(ReviewedPlan(Info))
	want := []string{"softnet-squeeze: " + OneSampleNote}
	if d := cmp.Diff(want, got.Notes); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
}
