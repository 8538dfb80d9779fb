package bench

import (
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"redline/internal/benchdata"
)

// tickPrecision is the significant figures of the short progress
// histograms, which only feed the live p99.
const tickPrecision = 2

// recorder holds one worker's measurements. Only its worker records, and
// it holds mu while it handles one read's replies (not per request); the
// progress goroutine takes the interval histogram and the count under mu,
// so each progress interval covers exactly the replies since the previous
// one: no reply is shown late or twice, and a stall shows in the interval
// it ended in.
type recorder struct {
	mu    sync.Mutex
	hists []*hdr.Histogram // per command, from the intended send time
	unc   []*hdr.Histogram // per command, from the actual send (rate mode only)
	count int64
	last  int64 // when the last measured reply arrived
	drain benchdata.Drain
	end   int64 // rate mode with --duration: when the loop's schedule ended

	tick *hdr.Histogram // since the last snapshot

	// Connection set-up, written by the worker only and read after it
	// ends.
	connect, ready *hdr.Histogram
	failures       map[string]int64
	retries        int64

	cluster *clusterRec // --cluster: per node, redirections
	fo      *failRec    // --reconnect: failures, per second and outages
}

// connPrecision is the significant figures of the connection histograms:
// 1% is plenty for set-up times, and keeps two more histograms per loop
// small.
const connPrecision = 2

func (r *recorder) connected(d int64) { r.connect.RecordValue(clampLatency(d)) }
func (r *recorder) isReady(d int64)   { r.ready.RecordValue(clampLatency(d)) }

func (r *recorder) connectFailed(cause string) {
	if r.failures == nil {
		r.failures = map[string]int64{}
	}
	r.failures[cause]++
}

func newRecorder(precision, classes int, rate bool) *recorder {
	r := &recorder{tick: newTick(), connect: newConnHist(), ready: newConnHist()}
	for range classes {
		r.hists = append(r.hists, hdr.New(1, int64(benchdata.MaxLatency), precision))
		if rate {
			r.unc = append(r.unc, hdr.New(1, int64(benchdata.MaxLatency), precision))
		}
	}
	return r
}

func newConnHist() *hdr.Histogram {
	return hdr.New(1, int64(benchdata.MaxLatency), connPrecision)
}

func newTick() *hdr.Histogram { return hdr.New(1, int64(benchdata.MaxLatency), tickPrecision) }

func clampLatency(v int64) int64 {
	return min(max(v, 1), int64(benchdata.MaxLatency))
}

// record adds one measured reply; the caller holds mu.
func (r *recorder) record(p pending, now int64) {
	lat := clampLatency(now - p.intended)
	r.hists[p.class].RecordValue(lat)
	if r.unc != nil {
		r.unc[p.class].RecordValue(clampLatency(now - p.sent))
	}
	r.tick.RecordValue(lat)
	if r.fo != nil {
		r.fo.ok(p.intended, now)
	}
	r.count++
	r.last = now
}

// snapshot returns the replies recorded since the previous snapshot, as a
// histogram, and the count of all of them so far.
func (r *recorder) snapshot() (*hdr.Histogram, int64) {
	fresh := newTick()
	r.mu.Lock()
	tick, count := r.tick, r.count
	r.tick = fresh
	r.mu.Unlock()
	return tick, count
}
