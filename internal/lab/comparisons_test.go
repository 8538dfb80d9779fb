package lab

import (
	"math/rand/v2"
	"testing"

	"redline/internal/stats"
)

func TestVerdicts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	noisy := func(center, spread float64, n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = center + (r.Float64()-0.5)*spread
		}
		return v
	}
	base := noisy(100000, 2000, 7)
	cases := []struct {
		name   string
		vals   []float64
		higher bool
		want   string
	}{
		{"clear gain", noisy(120000, 2000, 7), true, stats.LabWords.Better},
		{"clear loss", noisy(80000, 2000, 7), true, stats.LabWords.Worse},
		{"noise", noisy(100500, 2000, 7), true, stats.LabWords.Unclear},
		{"latency down is good", noisy(80000, 2000, 7), false, stats.LabWords.Better},
		{"too few runs", noisy(150000, 10, 2), true, stats.VerdictTooFew},
	}
	for _, c := range cases {
		got, _ := compare(stats.Design{Alpha: 0.05, Comparisons: 1, Looks: 1}, "w", "v", "b", "rps", c.higher, c.vals, base)
		if got.Verdict != c.want {
			t.Errorf("%s: verdict %q (ratio %.3f CI %.3f..%.3f), want %q", c.name, got.Verdict, got.Ratio, got.CILow, got.CIHigh, c.want)
		}
		if got.HasCI && (got.CILow > got.Ratio || got.CIHigh < got.Ratio) {
			t.Errorf("%s: ratio %.3f outside its CI %.3f..%.3f", c.name, got.Ratio, got.CILow, got.CIHigh)
		}
	}
}
