package steerspec

import (
	"strings"
	"testing"
	"time"
)

// TestCheckAndCheckGiven: one set of ranges; a zero setting is steer's
// default for Check (a scenario, a session's steer.start) and out of range
// for CheckGiven (redline steer's flags).
func TestCheckAndCheckGiven(t *testing.T) {
	collect := func(check func(func(string, string, ...any))) []string {
		var out []string
		check(func(field, format string, args ...any) {
			out = append(out, field)
		})
		return out
	}
	var zero Spec
	if bad := collect(zero.Check); len(bad) != 0 {
		t.Errorf("Check(zero) = %v, want none", bad)
	}
	if bad := collect(zero.CheckGiven); strings.Join(bad, ",") != "period,periods,majority,sample,domain" {
		t.Errorf("CheckGiven(zero) = %v, want every field", bad)
	}
	good := Spec{Period: time.Second, Periods: 5, Majority: 0.6, Sample: 4, Domain: "llc"}
	if bad := collect(good.CheckGiven); len(bad) != 0 {
		t.Errorf("CheckGiven(%+v) = %v, want none", good, bad)
	}
	out := Spec{Period: time.Millisecond, Periods: -1, Majority: 0.5, Sample: 3, Domain: "cache"}
	for name, check := range map[string]func(func(string, string, ...any)){"Check": out.Check, "CheckGiven": out.CheckGiven} {
		if bad := collect(check); len(bad) != 5 {
			t.Errorf("%s(%+v) = %v, want every field", name, out, bad)
		}
	}
}
