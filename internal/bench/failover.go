package bench

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"redline/internal/benchdata"
)

// --reconnect (Options.Reconnect): a failure that would end a run (a
// connection closed, reset or refused, no reply within --timeout, a
// failover's error reply) is counted instead, the requests it took are
// failed, and the connection is set up again with a backoff. What failed
// is kept per second and as outages (benchdata.Failover).

// Failure kinds, in the order they are reported.
const (
	kindRefused = iota
	kindReset
	kindTimeout
	kindLoading
	kindReadonly
	kindMasterDown
	kindTryAgain
	kindClusterDown
	kindOther
	nKinds
)

var kindNames = [nKinds]string{"refused", "reset", "timeout", "LOADING", "READONLY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "other"}

// replyKinds are the error replies a failover produces, by their first
// word: a request answered with one of them failed, the run goes on.
var replyKinds = []struct {
	prefix []byte
	kind   int
}{
	{[]byte("-LOADING"), kindLoading},
	{[]byte("-READONLY"), kindReadonly},
	{[]byte("-MASTERDOWN"), kindMasterDown},
	{[]byte("-TRYAGAIN"), kindTryAgain},
	{[]byte("-CLUSTERDOWN"), kindClusterDown},
}

// replyKind classifies an error reply; ok is false for any other error
// (a wrong command, a wrong type), which still ends the run.
func replyKind(reply []byte) (int, bool) {
	for _, k := range replyKinds {
		if bytes.HasPrefix(reply, k.prefix) {
			return k.kind, true
		}
	}
	return 0, false
}

// connectKind classifies a failed connect by its errno name.
func connectKind(cause string) int {
	switch cause {
	case "ECONNREFUSED":
		return kindRefused
	case "ECONNRESET", "EPIPE":
		return kindReset
	case "timeout":
		return kindTimeout
	}
	return kindOther
}

// Backoff of a reconnect: the first is dialled at once, then each waits
// twice the previous, from reconnectMin up to Options.ReconnectMax.
const reconnectMin = time.Millisecond

// DefaultReconnectMax is the longest wait between two reconnects of one
// connection: an outage is seen to end at most this late.
const DefaultReconnectMax = 25 * time.Millisecond

// outageJoin is how close two failures are to belong to one outage when a
// request succeeded between them.
const outageJoin = int64(time.Second)

// failRec is what one loop counted of failures; only the loop writes it,
// the summary reads it after the loop ended. Times are ns since the run's
// origin.
type failRec struct {
	from       func() int64 // when the measurement started
	seconds    []secondRec  // by second of the measurement
	spans      []failSpan
	requests   int64
	connects   int64
	reconnects int64
	byKind     [nKinds]int64
}

type secondRec struct {
	ok     int64
	kinds  [nKinds]int64
	failed bool
}

// failSpan is one loop's outage: first and last failure, the first
// success after the last one (0: none yet).
type failSpan struct {
	first, last, recovered int64
	requests               int64
	kinds                  [nKinds]int64
	straddle               *hdr.Histogram
}

func (f *failRec) second(now int64) *secondRec {
	s := int((now - f.from()) / int64(time.Second))
	if s < 0 {
		return nil // warm-up
	}
	for len(f.seconds) <= s {
		f.seconds = append(f.seconds, secondRec{})
	}
	return &f.seconds[s]
}

// fail counts n failed requests (n 0: a connection lost idle) or, with
// connect set, one failed connect, of kind at now.
func (f *failRec) fail(now int64, kind int, n int64, connect bool) {
	sec := f.second(now)
	if sec == nil {
		return
	}
	count := n
	if connect {
		count = 1
		f.connects++
	}
	f.requests += n
	f.byKind[kind] += count
	sec.kinds[kind] += count
	sec.failed = true
	if len(f.spans) == 0 || f.spans[len(f.spans)-1].recovered != 0 && now-f.spans[len(f.spans)-1].last >= outageJoin {
		f.spans = append(f.spans, failSpan{first: now, straddle: newConnHist()})
	}
	sp := &f.spans[len(f.spans)-1]
	sp.last, sp.recovered = now, 0
	sp.requests += n
	sp.kinds[kind] += count
}

// ok counts a measured success sent (or due) at intended: the first one
// after a failure ends the outage, and one in flight across it straddled
// it.
func (f *failRec) ok(intended, now int64) {
	if sec := f.second(now); sec != nil {
		sec.ok++
	}
	if len(f.spans) == 0 {
		return
	}
	sp := &f.spans[len(f.spans)-1]
	if sp.recovered == 0 {
		sp.recovered = now
	}
	if intended < sp.recovered && now > sp.first {
		sp.straddle.RecordValue(clampLatency(now - intended))
	}
}

// end is when the span ended: its recovery, else its last failure.
func (sp *failSpan) end() int64 {
	if sp.recovered != 0 {
		return sp.recovered
	}
	return sp.last
}

// failover merges the loops' failures into the Summary's figures; from
// is when the measurement started.
func (r *runner) failover(recs []*failRec, from int64) *benchdata.Failover {
	out := &benchdata.Failover{}
	var seconds []secondRec
	var spans []failSpan
	for _, f := range recs {
		if f == nil {
			continue
		}
		out.FailedRequests += f.requests
		out.FailedConnects += f.connects
		out.Reconnects += f.reconnects
		for i, s := range f.seconds {
			for len(seconds) <= i {
				seconds = append(seconds, secondRec{})
			}
			seconds[i].ok += s.ok
			seconds[i].failed = seconds[i].failed || s.failed
			for k := range nKinds {
				seconds[i].kinds[k] += s.kinds[k]
			}
		}
		spans = append(spans, f.spans...)
	}
	for i, s := range seconds {
		if s.failed {
			out.Seconds = append(out.Seconds, benchdata.FailureSecond{Second: i, OK: s.ok, Failures: kindMap(s.kinds)})
		}
	}
	for _, sp := range mergeSpans(spans) {
		out.Outages = append(out.Outages, outageOf(sp, from))
	}
	if r.sentinel != nil {
		out.Switches = r.sentinel.switches.Load()
		out.Primary = r.sentinel.current().addr
	}
	if r.cluster != nil {
		out.Switches = r.cluster.refreshes.Load()
	}
	return out
}

// mergeSpans joins the loops' spans that overlap: one outage seen by
// several loops ends when the last of them recovered.
func mergeSpans(spans []failSpan) []failSpan {
	slices.SortFunc(spans, func(a, b failSpan) int { return int(a.first - b.first) })
	var out []failSpan
	for _, sp := range spans {
		if len(out) > 0 && sp.first <= out[len(out)-1].end() {
			m := &out[len(out)-1]
			unrecovered := m.recovered == 0 || sp.recovered == 0
			m.last = max(m.last, sp.last)
			m.recovered = max(m.recovered, sp.recovered)
			if unrecovered {
				m.recovered = 0
			}
			m.requests += sp.requests
			for k := range nKinds {
				m.kinds[k] += sp.kinds[k]
			}
			m.straddle = mergeHist(m.straddle, sp.straddle)
			continue
		}
		out = append(out, sp)
	}
	return out
}

func mergeHist(a, b *hdr.Histogram) *hdr.Histogram {
	m := newConnHist()
	m.Merge(a)
	m.Merge(b)
	return m
}

func outageOf(sp failSpan, from int64) benchdata.Outage {
	sec := func(t int64) float64 { return time.Duration(t - from).Seconds() }
	o := benchdata.Outage{
		StartSeconds: sec(sp.first), EndSeconds: sec(sp.end()), Seconds: time.Duration(sp.end() - sp.first).Seconds(),
		FirstSecond: int((sp.first - from) / int64(time.Second)), LastSecond: int((sp.last - from) / int64(time.Second)),
		Recovered: sp.recovered != 0, FailedRequests: sp.requests, Failures: kindMap(sp.kinds),
		Straddled: sp.straddle.TotalCount(),
	}
	if o.Straddled > 0 {
		o.StraddledHistogram = &benchdata.Histogram{Histogram: sp.straddle}
		straddledDigest(&o)
	}
	return o
}

// straddledDigest sets o's straddled percentiles from its histogram.
func straddledDigest(o *benchdata.Outage) {
	h := o.StraddledHistogram.Histogram
	ms := func(v int64) float64 { return float64(v) / 1e6 }
	o.StraddledP50Ms, o.StraddledP99Ms, o.StraddledMaxMs = ms(h.ValueAtPercentile(50)), ms(h.ValueAtPercentile(99)), ms(h.Max())
}

func kindMap(kinds [nKinds]int64) map[string]int64 {
	m := map[string]int64{}
	for k, n := range kinds {
		if n > 0 {
			m[kindNames[k]] = n
		}
	}
	return m
}

// reconnecting reports whether a failure now is counted and gone
// through (--reconnect, once the measurement started) rather than the
// end of the run.
func (w *worker) reconnecting() bool { return w.rec.fo != nil && w.r.started.Load() }

// lost handles a connection that failed with kind: without --reconnect
// the run ends with err; with it, the requests it had outstanding fail,
// and it is dialled again after its backoff.
func (w *worker) lost(c *conn, kind int, err error) error {
	if !w.reconnecting() {
		return err
	}
	now := w.r.now()
	w.failQueue(c, kind, now)
	if c.fd >= 0 {
		unix.Close(c.fd)
		w.byFD[c.fd] = nil
		c.fd = -1
	}
	c.out, c.outOff, c.in, c.wantOut, c.prefix = c.out[:0], 0, c.in[:0], false, 0
	if c.state != stDown {
		w.goDown(c, kind, now)
	}
	if g := c.grp; g != nil && g.outstanding == 0 && g.active() {
		return w.groupBatch(g) // the client's batch is over: the next one
	}
	return nil
}

// failQueue fails every request outstanding (or queued) on c.
func (w *worker) failQueue(c *conn, kind int, now int64) {
	var failed int64
	for c.q.size > 0 {
		p := c.q.pop()
		w.pending--
		if p.asking {
			continue
		}
		if c.grp != nil {
			c.grp.outstanding--
		}
		if p.measured {
			failed++
		}
	}
	c.sent, c.sentHead = c.sent[:0], 0
	w.rec.fo.fail(now, kind, failed, false)
}

// goDown marks c to be dialled again after its backoff, and asks for
// the topology again (--cluster, --sentinel).
func (w *worker) goDown(c *conn, kind int, now int64) {
	c.state, c.downKind, c.redialed = stDown, uint8(kind), true
	c.redialAt = now + c.backoff
	c.backoff = min(max(2*c.backoff, int64(reconnectMin)), w.r.o.reconnectMax())
	if w.down == 0 || c.redialAt < w.nextRedial {
		w.nextRedial = c.redialAt
	}
	w.down++
	switch {
	case w.r.sentinel != nil:
		w.r.sentinel.askAgain()
	case w.cl != nil:
		w.cl.run.askRefresh()
	}
}

// redial dials every connection whose backoff is over and returns how
// long poll may wait for the next one, in ms.
func (w *worker) redial() (int, error) {
	now := w.r.now()
	if now < w.nextRedial {
		return int((w.nextRedial - now + int64(time.Millisecond) - 1) / int64(time.Millisecond)), nil
	}
	w.nextRedial = math.MaxInt64
	var due []*conn
	for _, c := range w.conns {
		switch {
		case c.state != stDown:
		case c.redialAt <= now:
			due = append(due, c)
		default:
			w.nextRedial = min(w.nextRedial, c.redialAt)
		}
	}
	for _, c := range due {
		w.down--
		if err := w.dial(c); err != nil { // a failed connect goes down again
			return 0, err
		}
	}
	if w.down == 0 {
		return 100, nil
	}
	return int(max(w.nextRedial-now, 0) / int64(time.Millisecond)), nil
}

// failedReply counts a request answered with a failover's error reply
// (--reconnect) and reports whether it did; with --sentinel a primary
// that became a replica (-READONLY) is left for the one Sentinel names.
func (w *worker) failedReply(c *conn, p pending, reply []byte, now int64) bool {
	if !w.reconnecting() {
		return false
	}
	k, ok := replyKind(reply)
	if !ok {
		return false
	}
	var n int64
	if p.measured {
		n = 1
	}
	w.rec.fo.fail(now, k, n, false)
	switch {
	case w.r.sentinel != nil && (k == kindReadonly || k == kindMasterDown):
		c.drop = uint8(k + 1)
	case w.cl != nil:
		w.cl.run.askRefresh()
	}
	return true
}

// readKind classifies a failed read.
func readKind(err error) int {
	if errors.Is(err, unix.ETIMEDOUT) {
		return kindTimeout
	}
	return kindReset
}
