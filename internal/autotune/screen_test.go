package autotune

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"redline/internal/testutil"
)

// TestScreenResumeContinuesWhereItStopped: a session whose budget
// cannot reach its 30 values one at a time screens in groups (the plan's
// choice, journaled with its options); killed in the middle of its group
// tests and resumed from the journal, it ends as the session that never
// died: the same group decisions, comparisons and cleared values,
// measuring only what the journal did not hold.
func TestScreenResumeContinuesWhereItStopped(t *testing.T) {
	effect := screenCase{effects: map[Setting]float64{{"k07", "on"}: 1.2}}.effect
	o := Options{Candidates: screenCatalog(), MaxMeasurements: screenBudget, Seed: 3}
	whole, err := Run(context.Background(), &simHost{rng: rand.New(rand.NewPCG(3, 1)), noise: testutil.NoiseModels()[0], effect: effect}, o)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Plan.Screen == nil || len(whole.Groups) == 0 {
		t.Fatalf("30 values in %d measurements: not screened in groups", screenBudget)
	}
	if _, ok := whole.Final.Value("k07"); !ok {
		t.Errorf("the planted x1.2 not kept: final %s", whole.Final)
	}
	dir := t.TempDir()
	o.Dir = dir
	h := &simHost{rng: rand.New(rand.NewPCG(3, 1)), noise: testutil.NoiseModels()[0], effect: effect}
	if _, err := Run(context.Background(), &crashing{h: h, n: 100}, o); !errors.Is(err, errCrash) {
		t.Fatalf("the first part: %v, want the crash", err)
	}
	ro, err := ReadOptions(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !ro.Screen {
		t.Errorf("the journaled options do not say the session screens in groups")
	}
	ro.Dir, ro.Resume = dir, true
	counted := &counting{h: h}
	rest, err := Run(context.Background(), counted, ro)
	if err != nil {
		t.Fatal(err)
	}
	for what, d := range map[string]string{"groups": cmp.Diff(whole.Groups, rest.Groups), "trials": cmp.Diff(whole.Trials, rest.Trials), "cleared": cmp.Diff(whole.Cleared, rest.Cleared)} {
		if d != "" {
			t.Errorf("the resumed session's %s differ (-whole +resumed):\n%s", what, d)
		}
	}
	if rest.Measurements != whole.Measurements || counted.n != whole.Measurements-100 {
		t.Errorf("resumed: %d measurements, %d new; want %d and %d", rest.Measurements, counted.n, whole.Measurements, whole.Measurements-100)
	}
}
