package bench

import (
	"slices"
	"testing"
	"time"
)

func TestFixedRateDueTimes(t *testing.T) {
	const start = int64(5 * time.Second)
	ms := int64(time.Millisecond)
	cases := []struct {
		name      string
		rate      float64
		loops, id int
		want      []int64 // due(0), due(1), ... relative to start
	}{
		{"one loop", 1000, 1, 0, []int64{0, ms, 2 * ms, 3 * ms}},
		{"first of two loops", 1000, 2, 0, []int64{0, 2 * ms, 4 * ms}},
		{"second of two loops starts half an interval late", 1000, 2, 1, []int64{ms, 3 * ms, 5 * ms}},
		{"third of four loops", 1000, 4, 2, []int64{2 * ms, 6 * ms, 10 * ms}},
		{"interval rounds down to the nanosecond", 3, 1, 0, []int64{0, 333_333_333, 666_666_666, 999_999_999}},
		{"rate below one per second", 0.5, 1, 0, []int64{0, 2 * int64(time.Second)}},
		{"more loops than requests per interval", 1e6, 3, 2, []int64{2000, 5000, 8000}},
	}
	for _, c := range cases {
		p := newFixedRate(c.rate, c.loops, c.id, start)
		for n, want := range c.want {
			if got := p.due(int64(n)) - start; got != want {
				t.Errorf("%s: due(%d) = start%+d ns, want start%+d", c.name, n, got, want)
			}
		}
	}
}

// TestFixedRateLoopsInterleave: the loops together send at the total rate,
// evenly spaced, none two at once.
func TestFixedRateLoopsInterleave(t *testing.T) {
	const loops, rate, perLoop = 4, 40_000.0, 100
	var all []int64
	for id := range loops {
		p := newFixedRate(rate, loops, id, 0)
		for n := range int64(perLoop) {
			all = append(all, p.due(n))
		}
	}
	slices.Sort(all)
	gap := int64(float64(time.Second) / rate)
	for i := 1; i < len(all); i++ {
		if d := all[i] - all[i-1]; d != gap {
			t.Fatalf("requests %d and %d are %d ns apart, want %d", i-1, i, d, gap)
		}
	}
}
