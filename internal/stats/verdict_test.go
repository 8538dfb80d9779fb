package stats

import (
	"math"
	"testing"
)

var one = Design{Alpha: 0.05, Comparisons: 1, Looks: 1}

func TestCompareVerdicts(t *testing.T) {
	ref := []float64{100, 101, 99, 100.5, 99.5}
	cases := []struct {
		name   string
		x      []float64
		higher bool
		want   Outcome
	}{
		{"clear gain in throughput", []float64{110, 111, 109, 110.5, 109.5}, true, Better},
		{"clear loss in throughput", []float64{90, 91, 89, 90.5, 89.5}, true, Worse},
		{"higher latency is worse", []float64{110, 111, 109, 110.5, 109.5}, false, Worse},
		{"lower latency is better", []float64{90, 91, 89, 90.5, 89.5}, false, Better},
		{"overlapping runs", []float64{99, 103, 98, 101, 100}, true, Unclear},
		{"a big ratio from wild runs is not a gain", []float64{80, 160, 95, 150, 101}, true, Unclear},
		{"two runs are too few at 5%", []float64{130, 131}, true, TooFew},
		{"one run is too few", []float64{130}, true, TooFew},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, ok := Compare(c.x, ref, c.higher, one)
			if !ok {
				t.Fatal("no comparison")
			}
			if v.Outcome != c.want {
				t.Fatalf("outcome %v, want %v (ratio %.3f CI %.3f..%.3f)", v.Outcome, c.want, v.Ratio, v.CILow, v.CIHigh)
			}
			if v.HasCI != (c.want != TooFew) {
				t.Errorf("HasCI %v with outcome %v: an interval is claimed exactly when there are enough runs", v.HasCI, v.Outcome)
			}
			if !v.HasCI && (v.CILow != 0 || v.CIHigh != 0) {
				t.Errorf("interval %.3f..%.3f given without HasCI", v.CILow, v.CIHigh)
			}
			if v.HasCI && !(v.CILow <= v.Ratio && v.Ratio <= v.CIHigh) {
				t.Errorf("ratio %.3f outside its interval %.3f..%.3f", v.Ratio, v.CILow, v.CIHigh)
			}
		})
	}
}

// TestCompareSplitsTheBudget: the same runs that make a claim alone make
// none when the lab compares forty things at once.
func TestCompareSplitsTheBudget(t *testing.T) {
	x, ref := []float64{104, 105, 103, 106, 104.5}, []float64{100, 101, 99, 102, 103}
	if v, _ := Compare(x, ref, true, one); v.Outcome != Better {
		t.Fatalf("alone: %v %.3f..%.3f", v.Outcome, v.CILow, v.CIHigh)
	}
	if v, _ := Compare(x, ref, true, Design{Alpha: 0.05, Comparisons: 40}); v.Outcome == Better || v.Outcome == Worse {
		t.Errorf("one of forty: %v %.3f..%.3f", v.Outcome, v.CILow, v.CIHigh)
	}
}

func TestCompareWithoutARatio(t *testing.T) {
	for _, c := range []struct{ x, ref []float64 }{{nil, []float64{1, 2, 3}}, {[]float64{1, 2, 3}, nil}, {[]float64{1, 2, 3}, []float64{0, 0, 0}}} {
		if _, ok := Compare(c.x, c.ref, true, one); ok {
			t.Errorf("Compare(%v, %v) gave a comparison", c.x, c.ref)
		}
	}
}

func TestWords(t *testing.T) {
	for o, want := range map[Outcome][2]string{
		Better: {"helps", "better"}, Worse: {"hurts", "worse"}, Unclear: {"no clear change", "no clear difference"},
		TooFew: {VerdictTooFew, VerdictTooFew},
	} {
		if got := LabWords.Verdict(o); got != want[0] {
			t.Errorf("lab verdict of %v = %q, want %q", o, got, want[0])
		}
		if got := MergeWords.Verdict(o); got != want[1] {
			t.Errorf("merge verdict of %v = %q, want %q", o, got, want[1])
		}
		if claims := o == Better || o == Worse; Claims(want[0]) != claims || Claims(want[1]) != claims {
			t.Errorf("Claims(%q or %q) != %v", want[0], want[1], claims)
		}
	}
}

func TestJudgeOfOldFiles(t *testing.T) {
	if o := Judge(2, 5, 1.1, 1.2, true); o != TooFew {
		t.Errorf("2 runs: %v", o)
	}
	if o := Judge(5, 5, 1.1, 1.2, true); o != Better {
		t.Errorf("5 runs above 1: %v", o)
	}
}

func TestCompareRatioIsThePairMedian(t *testing.T) {
	c, _ := Compare([]float64{2, 2, 2}, []float64{1, 1, 1}, true, one)
	if math.Abs(c.Ratio-2) > 1e-12 || c.Median != 2 || c.RefMedian != 1 {
		t.Errorf("%+v", c)
	}
}
