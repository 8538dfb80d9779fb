package report

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"redline/internal/benchdata"
)

// mergeHistograms adds up the runs' latency histograms. Percentiles of a
// group are read from this sum: merging HDR histograms is exact, while
// averaging per-run percentiles has no meaning. It returns nil when no run
// carries a histogram, and how many did.
func mergeHistograms(sums []*benchdata.Summary) (*hdr.Histogram, int) {
	var merged *hdr.Histogram
	n := 0
	for _, s := range sums {
		if s == nil || s.Histogram == nil || s.Histogram.Histogram == nil {
			continue
		}
		h := s.Histogram.Histogram
		if merged == nil {
			merged = hdr.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
		}
		merged.Merge(h)
		n++
	}
	return merged, n
}

// CurvePoint is one point of a latency percentile curve.
type CurvePoint struct {
	// Percentile is in [0, 100); X is -log10(1-Percentile/100), the
	// position on HdrHistogram's "nines" axis (2 = 99%, 3 = 99.9%).
	Percentile float64 `json:"percentile"`
	X          float64 `json:"x"`
	Ms         float64 `json:"ms"`
}

// curveStep is the spacing of curve points along the nines axis.
const curveStep = 0.05

// percentileCurve samples h along the nines axis, up to the resolution its
// count supports (one more nine than log10(count) would invent data).
func percentileCurve(h *hdr.Histogram) []CurvePoint {
	if h == nil || h.TotalCount() == 0 {
		return nil
	}
	maxX := math.Log10(float64(h.TotalCount()))
	var pts []CurvePoint
	for i := 0; ; i++ {
		x := float64(i) * curveStep
		if x > maxX {
			break
		}
		p := 100 * (1 - math.Pow(10, -x))
		pts = append(pts, CurvePoint{Percentile: p, X: x, Ms: float64(h.ValueAtPercentile(p)) / 1e6})
	}
	return pts
}
