package stats

import (
	"math/rand/v2"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 2, 3}, 2.5}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestUCDF checks the exact Mann-Whitney distribution against counts done
// by hand: for one run a side U is 0 or 1 with equal chance; for 2 and 2
// the six orderings give U = 0,1,2,2,3,4.
func TestUCDF(t *testing.T) {
	for _, c := range []struct {
		n, m int
		want []float64
	}{
		{1, 1, []float64{0.5, 1}},
		{2, 2, []float64{1.0 / 6, 2.0 / 6, 4.0 / 6, 5.0 / 6, 1}},
	} {
		got := uCDF(c.n, c.m)
		for i := range c.want {
			if d := got[i] - c.want[i]; d > 1e-12 || d < -1e-12 {
				t.Errorf("uCDF(%d,%d) = %v, want %v", c.n, c.m, got, c.want)
				break
			}
		}
	}
}

// TestIntervalCoversTheTruth draws both groups from known distributions and
// checks the 95% interval holds the true ratio at least 95% of the time.
func TestIntervalCoversTheTruth(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	draw := func(center float64, n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = center * (1 + 0.03*r.NormFloat64())
		}
		return v
	}
	covered := 0
	const trials = 400
	d := Design{Alpha: 0.05}
	for range trials {
		c, _ := Compare(draw(110, 7), draw(100, 7), true, d)
		if c.CILow <= 1.1 && 1.1 <= c.CIHigh {
			covered++
		}
	}
	if covered < trials*93/100 {
		t.Errorf("the interval held the true ratio %d times in %d", covered, trials)
	}
}

func TestLookSchedule(t *testing.T) {
	for _, c := range []struct {
		min, max int
		want     []int
	}{{8, 16, []int{8, 12, 16}}, {5, 5, []int{5}}, {6, 40, []int{6, 9, 14, 21, 32, 40}}, {10, 11, []int{10, 11}}} {
		got := LookSchedule(c.min, c.max)
		if len(got) != len(c.want) {
			t.Errorf("LookSchedule(%d, %d) = %v, want %v", c.min, c.max, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("LookSchedule(%d, %d) = %v, want %v", c.min, c.max, got, c.want)
				break
			}
		}
	}
}

func TestRunsNeeded(t *testing.T) {
	// One comparison, one look: 4 runs a side (2/70 < 5%) suffice, 3 do
	// not (2/20 = 10%).
	if got := (Design{Alpha: 0.05, Comparisons: 1, Looks: 1}).RunsNeeded(); got != 4 {
		t.Errorf("RunsNeeded at 5%% = %d, want 4", got)
	}
	// The default lab: 8 comparisons and 3 looks at 5%.
	if got := (Design{Alpha: 0.05, Comparisons: 8, Looks: 3}).RunsNeeded(); got != 7 {
		t.Errorf("RunsNeeded at 5%%/24 = %d, want 7", got)
	}
}

func TestMedianCI(t *testing.T) {
	xs := []float64{9, 1, 8, 2, 7, 3, 6, 4, 5, 10}
	// Ten values: P(B < 2) = 11/1024 <= 2.5% < P(B < 3) = 56/1024, so the
	// 2nd and 9th smallest.
	if lo, hi, ok := MedianCI(xs, 0.05); !ok || lo != 2 || hi != 9 {
		t.Errorf("MedianCI = %v %v %v", lo, hi, ok)
	}
	if _, _, ok := MedianCI([]float64{1, 2, 3, 4, 5}, 0.05); ok {
		t.Error("five values gave a 95% interval (the best is 93.75%)")
	}
}
