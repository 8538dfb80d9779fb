package stats

import (
	"math/rand/v2"
	"testing"
)

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
		{"two runs are too few", []float64{130, 131}, true, TooFew},
		{"one run is too few", []float64{130}, true, TooFew},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, ok := Compare(c.x, ref, c.higher)
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
			if got := Judge(v.N, v.RefN, v.CILow, v.CIHigh, c.higher); got != v.Outcome {
				t.Errorf("Judge of the recorded numbers = %v, Compare said %v", got, v.Outcome)
			}
		})
	}
}

func TestCompareWithoutARatio(t *testing.T) {
	for _, c := range []struct{ x, ref []float64 }{{nil, []float64{1, 2, 3}}, {[]float64{1, 2, 3}, nil}, {[]float64{1, 2, 3}, []float64{0, 0, 0}}} {
		if _, ok := Compare(c.x, c.ref, true); ok {
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

func TestCompareIsDeterministic(t *testing.T) {
	x, ref := []float64{1.1, 1.2, 1.05, 1.15}, []float64{1, 1.02, 0.98, 1.01}
	a, _ := Compare(x, ref, true)
	b, _ := Compare(x, ref, true)
	if a != b {
		t.Errorf("same input, different results: %+v vs %+v", a, b)
	}
}

// TestBootstrapFalsePositives measures how often identical setups get a
// verdict, the figures MinRuns and TrustedRuns rest on.
func TestBootstrapFalsePositives(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		n       int
		maxRate float64
	}{{5, 0.08}, {3, 0.20}} {
		const trials = 150
		fp := 0
		for range trials {
			x, y := make([]float64, c.n), make([]float64, c.n)
			for i := range x {
				x[i], y[i] = 100+rng.NormFloat64(), 100+rng.NormFloat64()
			}
			if v, _ := Compare(x, y, true); v.Outcome == Better || v.Outcome == Worse {
				fp++
			}
		}
		if rate := float64(fp) / trials; rate > c.maxRate {
			t.Errorf("%d runs a side: %.0f%% of identical setups called different, want at most %.0f%%", c.n, 100*rate, 100*c.maxRate)
		}
	}
}
