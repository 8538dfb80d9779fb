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

// TestRatioCICoversTheTruth draws both groups from known distributions and
// checks the 95% interval holds the true ratio most of the time.
func TestRatioCICoversTheTruth(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	draw := func(center float64, n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = center * (1 + 0.03*r.NormFloat64())
		}
		return v
	}
	covered := 0
	const trials = 200
	for range trials {
		lo, hi := RatioCI(draw(110, 7), draw(100, 7))
		if lo <= 1.1 && 1.1 <= hi {
			covered++
		}
	}
	if covered < trials*80/100 {
		t.Errorf("the interval held the true ratio %d times in %d", covered, trials)
	}
	if lo, hi := RatioCI(nil, []float64{1}); lo != 0 || hi != 0 {
		t.Errorf("empty group: %v %v", lo, hi)
	}
}
