package rules

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"redline/internal/change"
	"redline/internal/doctor"
)

// The write-up host's saved report plans as the report in memory does,
// under the CLI's policy and the lab's.
func TestPlanOfSavedWriteupReport(t *testing.T) {
	rep, err := doctor.Run(context.Background(), writeupFacts(), doctor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := doctor.WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	saved, err := doctor.ReadReport(&b)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []doctor.PlanOptions{doctor.ReviewedPlan(doctor.Low), doctor.UnattendedPlan} {
		want := rep.Plan(o)
		if len(want.Changes) == 0 {
			t.Errorf("%+v: no changes for the write-up host", o)
		}
		if d := cmp.Diff(want, saved.Plan(o)); d != "" {
			t.Errorf("%+v: (-memory +saved):\n%s", o, d)
		}
	}
}

// What the lab applies unread is a part of what tune plan proposes from
// the same report at the same floor, change for change.
func TestUnattendedPlanIsPartOfReviewedPlan(t *testing.T) {
	rep, err := doctor.Run(context.Background(), writeupFacts(), doctor.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reviewed := map[string]change.Change{}
	for _, c := range rep.Plan(doctor.ReviewedPlan(doctor.UnattendedPlan.MinSeverity)).Changes {
		reviewed[c.Key()] = c
	}
	lab := rep.Plan(doctor.UnattendedPlan).Changes
	if len(lab) == 0 || len(lab) >= len(reviewed) {
		t.Fatalf("lab takes %d of %d changes; the write-up host should exercise the filter", len(lab), len(reviewed))
	}
	for _, c := range lab {
		if d := cmp.Diff(reviewed[c.Key()], c); d != "" {
			t.Errorf("%s: lab and CLI differ (-cli +lab):\n%s", c.Key(), d)
		}
	}
}
