package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"redline/internal/autotune"
)

// TestAutotuneScreenPrinting: the plan of a session whose budget cannot
// reach its values one at a time screens in groups and says how far its
// budget goes; at the end the values the budget did not reach are one
// line with the budget that would have reached them, and values cleared
// in groups are listed with their bound (in the report too).
func TestAutotuneScreenPrinting(t *testing.T) {
	var cands []autotune.Candidate
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"} {
		cands = append(cands, autotune.Candidate{Knob: k, Values: []string{"on"}})
	}
	o := &autotuneOptions{budget: 5 * time.Minute, engine: autotune.Options{Candidates: cands, MaxMeasurements: 100}}
	p, err := o.engine.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if p.Screen == nil {
		t.Fatalf("12 values in 100 measurements: not screened in groups")
	}
	var w bytes.Buffer
	autotunePrintPlan(&w, o, p, 3*time.Second, 100)
	out := w.String()
	for _, want := range []string{"screening in groups: 2 groups", "reach: the budget decides at least", "of 12 candidate values", "deciding them all takes at most"} {
		if !strings.Contains(out, want) {
			t.Errorf("the plan lacks %q:\n%s", want, out)
		}
	}
	res := &autotune.Result{Plan: p, Measurements: 100, Unreached: 64, Budget: 100,
		Untested: []autotune.Untested{{Setting: autotune.Setting{Knob: "a", Value: "on"}, Reason: "budget: 90 of 100 measurements used"},
			{Setting: autotune.Setting{Knob: "b", Value: "on"}, Reason: "budget: 90 of 100 measurements used"}},
		Cleared: []autotune.ClearedValue{{Setting: autotune.Setting{Knob: "c", Value: "on"}, Group: 1, Bound: 0.072, Groupings: 2}}}
	w.Reset()
	autotunePrintAnswer(&w, o, res, nil, "")
	out = w.String()
	if n := strings.Count(out, "budget:"); n != 1 {
		t.Errorf("%d budget lines, want one:\n%s", n, out)
	}
	for _, want := range []string{"budget: 2 values (a = on, b = on): a --budget of about 8m0s would have reached them (64 more measurements)",
		"cleared in groups:", "c = on", "no gain larger than 7.2% together (in both groupings)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the answer lacks %q:\n%s", want, out)
		}
	}
	un := strings.Join(autotuneReport(o, res, nil).Untested, "\n")
	if strings.Count(un, "budget:") != 1 || !strings.Contains(un, "c = on: not compared alone: cleared by group test 1") {
		t.Errorf("the report's untested lines:\n%s", un)
	}
}
