package report

import (
	"strings"
	"testing"

	"redline/internal/benchdata"
	"redline/internal/stats"
)

func TestCompareVerdicts(t *testing.T) {
	ref := []float64{100, 101, 99, 100.5, 99.5}
	cases := []struct {
		name   string
		x      []float64
		higher bool
		want   string
	}{
		{"clear gain in throughput", []float64{110, 111, 109, 110.5, 109.5}, true, "helps"},
		{"clear loss in throughput", []float64{90, 91, 89, 90.5, 89.5}, true, "hurts"},
		{"higher latency hurts", []float64{110, 111, 109, 110.5, 109.5}, false, "hurts"},
		{"lower latency helps", []float64{90, 91, 89, 90.5, 89.5}, false, "helps"},
		{"overlapping runs", []float64{99, 103, 98, 101, 100}, true, "no clear change"},
		{"a big ratio from wild runs is not a gain", []float64{80, 160, 95, 150, 101}, true, "no clear change"},
		{"two runs are too few", []float64{130, 131}, true, stats.VerdictTooFew},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := compare(c.x, ref, c.higher, stats.LabWords, stats.Design{Alpha: 0.05, Comparisons: 1, Looks: 1})
			if v.Verdict != c.want {
				t.Fatalf("verdict %q, want %q (ratio %.3f CI %s)", v.Verdict, c.want, v.Ratio, fmtCI(v))
			}
			if v.HasCI && !(v.CILow <= v.Ratio && v.Ratio <= v.CIHigh) {
				t.Errorf("ratio %.3f outside its interval %s", v.Ratio, fmtCI(v))
			}
			if got := fmtVerdict(v); claims(v) != strings.Contains(got, "%") {
				t.Errorf("fmtVerdict %q: a percentage must appear exactly when a change is claimed", got)
			}
		})
	}
}

func TestMedianAndSpread(t *testing.T) {
	xs := []float64{5, 1, 3, 2}
	if m := median(xs); m != 2.5 {
		t.Errorf("median %v, want 2.5", m)
	}
	if xs[0] != 5 {
		t.Error("median reordered its input")
	}
	s := spreadOf([]float64{90, 100, 110})
	if s.Median != 100 || s.Min != 90 || s.Max != 110 || s.Pct() != 20 {
		t.Errorf("spread %+v pct %v", s, s.Pct())
	}
}

// TestMergedPercentiles: a group's percentiles come from the histograms
// added up, which is not what averaging the runs' percentiles gives.
func TestMergedPercentiles(t *testing.T) {
	fast, slow := benchdata.NewHistogram(3), benchdata.NewHistogram(3)
	all := benchdata.NewHistogram(3)
	for i := range 1000 {
		fast.RecordValue(int64(100_000 + i))   // ~0.1 ms
		slow.RecordValue(int64(1_000_000 + i)) // ~1 ms
		all.RecordValue(int64(100_000 + i))
		all.RecordValue(int64(1_000_000 + i))
	}
	sums := []*benchdata.Summary{{Histogram: fast}, {Histogram: slow}, nil, {}}
	merged, n := mergeHistograms(sums)
	if n != 2 {
		t.Fatalf("merged %d histograms, want 2", n)
	}
	if merged.TotalCount() != 2000 || !merged.Equals(all.Histogram) {
		t.Fatalf("merged histogram differs from recording every value once")
	}
	got := benchdata.Digest(merged).P99
	avg := (benchdata.Digest(fast.Histogram).P99 + benchdata.Digest(slow.Histogram).P99) / 2
	if got < 1.0 || got > 1.01 {
		t.Errorf("merged p99 %.4f ms, want about 1.0 (the slow run's tail)", got)
	}
	if got-avg < 0.4 {
		t.Errorf("merged p99 %.3f is close to the average of p99s %.3f; the test data should tell them apart", got, avg)
	}
}

func TestPercentileCurve(t *testing.T) {
	h := benchdata.NewHistogram(3)
	for i := 1; i <= 10000; i++ {
		h.RecordValue(int64(i) * 1000)
	}
	pts := percentileCurve(h.Histogram)
	last := pts[len(pts)-1]
	if pts[0].X != 0 || last.X > 4+1e-9 || last.X < 4-curveStep {
		t.Errorf("curve spans x %v..%v, want 0..4 (10^4 values)", pts[0].X, last.X)
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].Ms < pts[i-1].Ms {
			t.Fatalf("curve falls at %v%%", pts[i].Percentile)
		}
	}
	if p99 := pointAt(pts, 2); p99 < 9.85 || p99 > 9.95 {
		t.Errorf("p99 on the curve %.3f ms, want about 9.9", p99)
	}
}

func pointAt(pts []CurvePoint, x float64) float64 {
	for _, p := range pts {
		if p.X >= x-1e-9 {
			return p.Ms
		}
	}
	return -1
}

func TestStep125(t *testing.T) {
	for _, c := range []struct {
		v    float64
		up   bool
		want float64
	}{{0.043, false, 0.02}, {0.043, true, 0.05}, {14.3, true, 20}, {14.3, false, 10}, {5, true, 5}, {5, false, 5}, {0.6, true, 1}} {
		if got := step125(c.v, c.up); got < c.want*0.999 || got > c.want*1.001 {
			t.Errorf("step125(%v, up=%v) = %v, want %v", c.v, c.up, got, c.want)
		}
	}
}
