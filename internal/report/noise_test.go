package report

import (
	"strings"
	"testing"

	"redline/internal/benchdata"
	"redline/internal/labdata"
)

func noisyResult() *labdata.Result {
	res := &labdata.Result{Schema: labdata.ResultSchema}
	add := func(rps, shared, outside float64, series []labdata.Second) {
		n := &labdata.Noise{OutsideCPU: outside, SharedCPU: shared}
		if outside > 0.1 {
			n.Noisy = "40% of the CPU went to other work"
		}
		res.Runs = append(res.Runs, labdata.Run{Seq: len(res.Runs) + 1, Variant: "baseline", Workload: "set",
			Summary: &benchdata.Summary{RPS: rps, Requests: 1000}, Noise: n, Series: series})
	}
	flat := []labdata.Second{{RPS: 100}, {RPS: 100}, {RPS: 100}, {RPS: 100}}
	warm := []labdata.Second{{RPS: 50}, {RPS: 100}, {RPS: 100}, {RPS: 100}}
	add(117000, 0.9, 0.02, warm)
	add(147000, 0.1, 0.02, flat)
	add(116000, 0.8, 0.40, flat)
	add(148000, 0.0, 0.01, flat)
	add(146000, 0.0, 0.01, []labdata.Second{{RPS: 100}})
	return res
}

// TestNoiseNotes: the report states each variant's noise and names the
// shared CPU as the likely cause of two groups of runs.
func TestNoiseNotes(t *testing.T) {
	notes := strings.Join(append(noiseNotes(noisyResult()), seriesNotes(noisyResult())...), "\n")
	for _, want := range []string{
		"Noise under baseline: other work took 2% of the CPU in the median run (at most 40%)",
		"1 of 5 runs flagged as noisy (#3 40% of the CPU went to other work)",
		"client and server shared a CPU in 2 of 5 runs (median 116,500 requests/s in those, 147,000 in the others)",
		"1 of 4 runs were still warming up", "1 runs were shorter than 4 seconds",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// TestSeriesChart: runs of several seconds are drawn second by second.
func TestSeriesChart(t *testing.T) {
	res := noisyResult()
	res.Variants = []labdata.VariantInfo{{Name: "baseline", Baseline: true}}
	html := string(render(t, FromResult(res, "result.json"), HTML))
	if !strings.Contains(html, "throughput second by second") || strings.Count(html, `stroke-width="1" opacity="0.6"`) != 4 {
		t.Errorf("no per-second lines for the 4 runs of 4 seconds")
	}
}

func TestSeriesShape(t *testing.T) {
	for _, c := range []struct {
		rps           []float64
		warmup, drift bool
	}{
		{[]float64{100, 100, 100, 100, 100}, false, false},
		{[]float64{60, 100, 100, 100, 100}, true, false},
		{[]float64{100, 100, 100, 80, 80}, false, true},
		{[]float64{60, 100}, false, false}, // too short to tell
	} {
		s := make([]labdata.Second, len(c.rps))
		for i, v := range c.rps {
			s[i].RPS = v
		}
		if w, d := seriesShape(s); w != c.warmup || d != c.drift {
			t.Errorf("%v: warm-up %v drift %v", c.rps, w, d)
		}
	}
}
