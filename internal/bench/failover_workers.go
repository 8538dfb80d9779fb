package bench

import (
	"maps"
	"slices"
	"time"

	"redline/internal/benchdata"
)

// failoverPart is one worker's failover figures and when its measurement
// started, on the coordinator's clock.
type failoverPart struct {
	start, end time.Time
	f          *benchdata.Failover
}

// mergeFailover merges the workers' failover figures of a --workers run
// into the merged Summary's, whose measurement starts at start: counts
// add up; each worker's seconds and outages move onto the merged
// timeline by its start's offset; outages that overlap are one (seen by
// several workers, it ends when the last of them recovered, as one
// loop's do in mergeSpans), their straddled latencies merged exactly.
// The workers start together at the ready barrier, so a worker's second
// i is the merged second i plus its offset in whole seconds (0 but for
// a start skew of a second or more). nil when no worker ran with
// --reconnect.
func mergeFailover(parts []failoverPart, start time.Time) *benchdata.Failover {
	var out *benchdata.Failover
	seconds := map[int]*benchdata.FailureSecond{}
	var outages []benchdata.Outage
	var lastEnd time.Time
	for _, p := range parts {
		f := p.f
		if f == nil {
			continue
		}
		if out == nil {
			out = &benchdata.Failover{}
		}
		out.FailedRequests += f.FailedRequests
		out.FailedConnects += f.FailedConnects
		out.Reconnects += f.Reconnects
		out.Switches = max(out.Switches, f.Switches)   // each worker follows the same primaries
		if f.Primary != "" && !p.end.Before(lastEnd) { // the last to end saw the last primary
			out.Primary, lastEnd = f.Primary, p.end
		}
		off := p.start.Sub(start).Seconds()
		shift := int(off)
		for _, s := range f.Seconds {
			m := seconds[s.Second+shift]
			if m == nil {
				m = &benchdata.FailureSecond{Second: s.Second + shift, Failures: map[string]int64{}}
				seconds[m.Second] = m
			}
			m.OK += s.OK
			for k, n := range s.Failures {
				m.Failures[k] += n
			}
		}
		for _, o := range f.Outages {
			o.StartSeconds += off
			o.EndSeconds += off
			o.FirstSecond += shift
			o.LastSecond += shift
			outages = append(outages, o)
		}
	}
	if out == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(seconds)) {
		out.Seconds = append(out.Seconds, *seconds[k])
	}
	out.Outages = mergeOutages(outages)
	return out
}

// mergeOutages joins outages (on one timeline) that overlap.
func mergeOutages(os []benchdata.Outage) []benchdata.Outage {
	slices.SortFunc(os, func(a, b benchdata.Outage) int {
		switch {
		case a.StartSeconds < b.StartSeconds:
			return -1
		case a.StartSeconds > b.StartSeconds:
			return 1
		}
		return 0
	})
	var out []benchdata.Outage
	for _, o := range os {
		o.Failures = maps.Clone(o.Failures)
		if len(out) == 0 || o.StartSeconds > out[len(out)-1].EndSeconds {
			out = append(out, o)
			continue
		}
		m := &out[len(out)-1]
		m.EndSeconds = max(m.EndSeconds, o.EndSeconds)
		m.Seconds = m.EndSeconds - m.StartSeconds
		m.LastSecond = max(m.LastSecond, o.LastSecond)
		m.Recovered = m.Recovered && o.Recovered
		m.FailedRequests += o.FailedRequests
		for k, n := range o.Failures {
			if m.Failures == nil {
				m.Failures = map[string]int64{}
			}
			m.Failures[k] += n
		}
		m.Straddled += o.Straddled
		switch {
		case o.StraddledHistogram == nil:
			m.StraddledMaxMs = max(m.StraddledMaxMs, o.StraddledMaxMs)
		case m.StraddledHistogram == nil:
			m.StraddledHistogram = o.StraddledHistogram
			m.StraddledMaxMs = max(m.StraddledMaxMs, o.StraddledMaxMs)
		default:
			h := benchdata.NewHistogram(int(m.StraddledHistogram.SignificantFigures()))
			h.Merge(m.StraddledHistogram.Histogram)
			h.Merge(o.StraddledHistogram.Histogram)
			m.StraddledHistogram = h
		}
		if m.StraddledHistogram != nil && m.StraddledHistogram.TotalCount() == m.Straddled {
			straddledDigest(m)
		}
	}
	return out
}
