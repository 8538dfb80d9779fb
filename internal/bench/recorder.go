package bench

import (
	"sync/atomic"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"redline/internal/benchdata"
)

// tickPrecision is the significant figures of the short progress
// histograms, which only feed the live p99.
const tickPrecision = 2

// recorder holds one worker's measurements. Only its worker writes the
// histograms; the progress goroutine reads the published counters and
// takes finished tick histograms through an atomic pointer, so the hot path
// has no locks.
type recorder struct {
	hists []*hdr.Histogram // per command, from the intended send time
	unc   []*hdr.Histogram // per command, from the actual send (rate mode only)
	count int64
	last  int64 // when the last measured reply arrived
	drain benchdata.Drain

	tick        *hdr.Histogram
	nextPublish int64
	done        atomic.Int64
	published   atomic.Pointer[hdr.Histogram]
}

func newRecorder(precision, classes int, rate bool) *recorder {
	r := &recorder{tick: newTick()}
	for range classes {
		r.hists = append(r.hists, hdr.New(1, int64(benchdata.MaxLatency), precision))
		if rate {
			r.unc = append(r.unc, hdr.New(1, int64(benchdata.MaxLatency), precision))
		}
	}
	return r
}

func newTick() *hdr.Histogram { return hdr.New(1, int64(benchdata.MaxLatency), tickPrecision) }

func clampLatency(v int64) int64 {
	return min(max(v, 1), int64(benchdata.MaxLatency))
}

func (r *recorder) record(p pending, now int64) {
	lat := clampLatency(now - p.intended)
	r.hists[p.class].RecordValue(lat)
	if r.unc != nil {
		r.unc[p.class].RecordValue(clampLatency(now - p.sent))
	}
	r.tick.RecordValue(lat)
	r.count++
	r.last = now
}

// maybePublish makes the counters visible to the progress goroutine and,
// every publishEvery, hands over the tick histogram.
func (r *recorder) maybePublish(now int64) {
	r.done.Store(r.count)
	if now < r.nextPublish {
		return
	}
	r.nextPublish = now + int64(publishEvery)
	// Only the reader empties the slot, so a nil seen here stays nil until
	// this Store; if the reader has not taken the last one, keep adding.
	if r.tick.TotalCount() == 0 || r.published.Load() != nil {
		return
	}
	r.published.Store(r.tick)
	r.tick = newTick()
}

const publishEvery = 100 * time.Millisecond

// take returns the tick histogram published since the last call, if any.
func (r *recorder) take() *hdr.Histogram { return r.published.Swap(nil) }
