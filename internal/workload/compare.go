package workload

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"redline/internal/bench"
	"redline/internal/redisadmin"
)

// Fidelity limits (issue 38's acceptance): a command's share of calls
// within 5 points; each type's element counts and sizes (median and 90th
// percentile), the key count and used memory within 10%.
const (
	ShareLimit    = 5.0  // percentage points
	RelativeLimit = 10.0 // percent
)

// Replay fills o's server with f's data set, runs its measured phase for
// d, and returns the profile of that server as Capture measures a source:
// commandstats over the run, then a sample of keys. The server should be
// a scratch one: it is written to.
func Replay(ctx context.Context, o bench.Options, f *File, d time.Duration, sample int) (*Profile, error) {
	if err := Fill(ctx, o, f); err != nil {
		return nil, err
	}
	c, err := redisadmin.Dial(ctx, o.AdminOptions(o.Addr))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	p := newProber(c, 0)
	before, err := readStats(ctx, p)
	if err != nil {
		return nil, err
	}
	t, err := Test(f, "replay")
	if err != nil {
		return nil, err
	}
	ro := o
	ro.Requests, ro.Duration, ro.Warmup = 0, d, 0
	if ro.MaxReply == 0 {
		ro.MaxReply = MaxReply(f)
	}
	if f.Run.Clients > 0 {
		ro.Clients = f.Run.Clients
	}
	if f.Run.Pipeline > 0 {
		ro.Pipeline = f.Run.Pipeline
	}
	if r := sourceRate(f.Source); r > 0 && ro.Rate == 0 {
		// The source's pace, open loop: the keys change as much per
		// second as the source's did.
		ro.Rate = r
	}
	start := time.Now()
	if _, err := bench.Run(ctx, ro, t, nil); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	after, err := readStats(ctx, p)
	if err != nil {
		return nil, err
	}
	secs := time.Since(start).Seconds()
	samples, err := p.sample(ctx, sample)
	if err != nil {
		return nil, err
	}
	return &Profile{Seconds: round3(secs), Calls: commandDelta(before, after, p.calls), Keys: dbKeys(after),
		UsedMemory: infoInt(after, "used_memory"), Clients: int64(ro.Clients), Types: typeStats(samples)}, nil
}

// sourceRate is the source's commands a second over its window, 0 when
// unknown.
func sourceRate(p *Profile) float64 {
	if p == nil || p.Seconds <= 0 {
		return 0
	}
	var n int64
	for _, c := range p.Calls {
		n += c
	}
	return float64(n) / p.Seconds
}

// Diff is one compared figure.
type Diff struct {
	What           string
	Source, Replay float64
	// Delta is Replay less Source: percentage points for shares, percent
	// of Source otherwise.
	Delta float64
	Unit  string // "pts" or "%"
	OK    bool
}

// Compare lists the differences between a source's profile and its
// replay's, each against its limit.
func Compare(src, rep *Profile) []Diff {
	var out []Diff
	ss, rs := shares(src.Calls), shares(rep.Calls)
	if len(ss) == 0 {
		rs = nil // no traffic in the source's window: capture wrote a PING placeholder
	}
	names := map[string]bool{}
	for n := range ss {
		names[n] = true
	}
	for n := range rs {
		names[n] = true
	}
	keys := make([]string, 0, len(names))
	for n := range names {
		keys = append(keys, n)
	}
	sort.Slice(keys, func(i, j int) bool {
		return ss[keys[i]] > ss[keys[j]] || ss[keys[i]] == ss[keys[j]] && keys[i] < keys[j]
	})
	for _, n := range keys {
		d := rs[n] - ss[n]
		out = append(out, Diff{What: "share " + n, Source: ss[n], Replay: rs[n], Delta: d, Unit: "pts", OK: math.Abs(d) <= ShareLimit})
	}
	types := make([]string, 0, len(src.Types))
	for t := range src.Types {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		a, b := src.Types[t], rep.Types[t]
		if b == nil {
			b = &TypeStats{}
		}
		out = append(out, rel(t+" elements p50", a.Elements.P50, b.Elements.P50),
			rel(t+" elements p90", a.Elements.P90, b.Elements.P90),
			rel(t+" element bytes p50", a.ElementBytes.P50, b.ElementBytes.P50),
			rel(t+" element bytes p90", a.ElementBytes.P90, b.ElementBytes.P90))
	}
	out = append(out, rel("keys", float64(src.Keys), float64(rep.Keys)),
		rel("used_memory", float64(src.UsedMemory), float64(rep.UsedMemory)))
	return out
}

func rel(what string, a, b float64) Diff {
	d := 0.0
	switch {
	case a != 0:
		d = 100 * (b - a) / a
	case b != 0:
		d = 100
	}
	return Diff{What: what, Source: a, Replay: b, Delta: d, Unit: "%", OK: math.Abs(d) <= RelativeLimit}
}

// shares is each command's percentage of all calls.
func shares(calls map[string]int64) map[string]float64 {
	var total int64
	for _, n := range calls {
		total += n
	}
	out := map[string]float64{}
	for n, c := range calls {
		if total > 0 {
			out[n] = 100 * float64(c) / float64(total)
		}
	}
	return out
}
