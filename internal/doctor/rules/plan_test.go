package rules

import (
	"bytes"
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

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
