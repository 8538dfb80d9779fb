package workload

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"redline/internal/redisadmin"
	"redline/internal/resp"
)

// Profile is the shape of a server's traffic and data: what capture
// records of the source and what compare measures of the replay.
type Profile struct {
	// Seconds is the window Calls were counted over.
	Seconds float64 `yaml:"seconds"`
	// Calls per command over the window (INFO commandstats after less
	// before, less the profile's own commands), as commandstats names them.
	Calls      map[string]int64 `yaml:"calls"`
	Keys       int64            `yaml:"keys"`
	UsedMemory int64            `yaml:"used_memory"`
	Clients    int64            `yaml:"clients"`
	// Types are per-type statistics of the sampled keys.
	Types map[string]*TypeStats `yaml:"types"`
}

// TypeStats describes the sampled keys of one type.
type TypeStats struct {
	Sampled int `yaml:"sampled"`
	// Elements is the fields, members, items or entries per key (1 for
	// strings); ElementBytes the size of one (a string's length, a hash
	// field's value, a member, a list item, a stream entry's first value).
	Elements     Quantiles `yaml:"elements"`
	ElementBytes Quantiles `yaml:"element_bytes"`
	TTLShare     float64   `yaml:"ttl_share"`
}

// Quantiles are a distribution's median and 90th percentile.
type Quantiles struct {
	P50 float64 `yaml:"p50"`
	P90 float64 `yaml:"p90"`
}

// keySample is what the sampler read of one key; its name is kept only
// as a pattern.
type keySample struct {
	pattern   string
	typ       string
	keyLen    int
	elements  int64
	elemBytes []int64 // the sizes of up to elemSample of its elements
	pttl      int64   // -1: no expiry
	numeric   bool    // a string holding an integer (OBJECT ENCODING int)
}

// prober runs the sampler's commands at a bounded rate and counts them
// by commandstats' name, so a window's deltas can leave them out.
type prober struct {
	c     *redisadmin.Conn
	gap   time.Duration
	last  time.Time
	calls map[string]int64
}

func newProber(c *redisadmin.Conn, rate float64) *prober {
	p := &prober{c: c, calls: map[string]int64{}}
	if rate > 0 {
		p.gap = time.Duration(float64(time.Second) / rate)
	}
	return p
}

// containers are the commands commandstats counts by subcommand.
var containers = map[string]bool{"memory": true, "object": true, "config": true, "client": true,
	"script": true, "function": true, "cluster": true, "command": true, "xinfo": true}

func statName(args []string) string {
	n := strings.ToLower(args[0])
	if containers[n] && len(args) > 1 {
		n += "|" + strings.ToLower(args[1])
	}
	return n
}

func (p *prober) do(ctx context.Context, args ...string) (resp.Value, error) {
	if p.gap > 0 {
		if wait := time.Until(p.last.Add(p.gap)); wait > 0 {
			select {
			case <-ctx.Done():
				return resp.Value{}, ctx.Err()
			case <-time.After(wait):
			}
		}
		p.last = time.Now()
	}
	p.calls[statName(args)]++
	return p.c.Do(ctx, args...)
}

// countCmd and elemCmd say how to count a type's elements and read one.
var countCmd = map[string]string{"string": "STRLEN", "hash": "HLEN", "set": "SCARD", "zset": "ZCARD", "list": "LLEN", "stream": "XLEN"}

func (p *prober) sampleKey(ctx context.Context, key string) (keySample, error) {
	s := keySample{pattern: Pattern(key), keyLen: len(key), pttl: -1}
	v, err := p.do(ctx, "TYPE", key)
	if err != nil {
		return s, err
	}
	s.typ = v.Str
	cc, ok := countCmd[s.typ]
	if !ok {
		return s, nil // module types, or gone (none)
	}
	if v, err = p.do(ctx, cc, key); err != nil {
		return s, err
	}
	n, _ := strconv.ParseInt(v.Str, 10, 64)
	s.elements = n
	if v, err = p.do(ctx, "PTTL", key); err == nil {
		s.pttl, _ = strconv.ParseInt(v.Str, 10, 64)
	}
	switch s.typ {
	case "string":
		s.elements, s.elemBytes = 1, []int64{n}
		if v, err = p.do(ctx, "OBJECT", "ENCODING", key); err == nil {
			s.numeric = v.Str == "int"
		}
	case "hash":
		s.elemBytes = p.elemLens(ctx, 2, 1, "HRANDFIELD", key, elemSampleArg, "WITHVALUES")
	case "set":
		s.elemBytes = p.elemLens(ctx, 1, 0, "SRANDMEMBER", key, elemSampleArg)
	case "zset":
		s.elemBytes = p.elemLens(ctx, 1, 0, "ZRANDMEMBER", key, elemSampleArg)
	case "list":
		if n > 0 {
			// elemSample consecutive items from a position set by the key
			// (LRANGE: one round trip).
			at := int64(len(key)*7919+int(s.keyLenHash())) % n
			s.elemBytes = p.elemLens(ctx, 1, 0, "LRANGE", key, strconv.FormatInt(at, 10), strconv.FormatInt(at+elemSample-1, 10))
		}
	case "stream":
		if v, err := p.do(ctx, "XRANGE", key, "-", "+", "COUNT", elemSampleArg); err == nil {
			for _, e := range v.Elems {
				if len(e.Elems) == 2 && len(e.Elems[1].Elems) >= 2 {
					s.elemBytes = append(s.elemBytes, int64(len(e.Elems[1].Elems[1].Str)))
				}
			}
		}
	}
	return s, nil
}

// elemSample is how many elements of a collection capture measures.
const (
	elemSample    = 5
	elemSampleArg = "5"
)

// keyLenHash spreads LRANGE's start over keys of one length.
func (s *keySample) keyLenHash() uint32 {
	h := uint32(2166136261)
	for _, c := range s.pattern {
		h = (h ^ uint32(c)) * 16777619
	}
	return h ^ uint32(s.keyLen)
}

// elemLens runs a command that returns an array of elements (every step-th
// from first) and returns their lengths.
func (p *prober) elemLens(ctx context.Context, step, first int, args ...string) []int64 {
	v, err := p.do(ctx, args...)
	if err != nil {
		return nil
	}
	var out []int64
	for i := first; i < len(v.Elems); i += step {
		out = append(out, int64(len(v.Elems[i].Str)))
	}
	return out
}

// sample reads up to n keys found by SCAN.
func (p *prober) sample(ctx context.Context, n int) ([]keySample, error) {
	var out []keySample
	cursor := "0"
	for len(out) < n {
		v, err := p.do(ctx, "SCAN", cursor, "COUNT", "100")
		if err != nil {
			return out, err
		}
		if len(v.Elems) != 2 {
			return out, fmt.Errorf("SCAN: unexpected reply")
		}
		cursor = v.Elems[0].Str
		for _, k := range v.Elems[1].Elems {
			if len(out) >= n {
				break
			}
			s, err := p.sampleKey(ctx, k.Str)
			if err != nil {
				return out, err
			}
			if s.typ != "none" {
				out = append(out, s)
			}
		}
		if cursor == "0" {
			break
		}
	}
	return out, nil
}

// Pattern is a key's shape: each ':'-separated part that holds a digit
// becomes "#", so "user:1234:cart" is "user:#:cart". The parts left are
// the key's prefix words; Capture hashes them unless asked not to.
func Pattern(key string) string {
	parts := strings.Split(key, ":")
	for i, p := range parts {
		if strings.ContainsAny(p, "0123456789") || len(p) > 24 {
			parts[i] = "#"
		}
	}
	if len(parts) == 1 {
		return "#"
	}
	return strings.Join(parts, ":")
}

// HashPattern replaces a pattern's words by a short hash, so no word of
// the source's key names leaves it.
func HashPattern(p string) string {
	h := sha256.Sum256([]byte(p))
	return "k" + hex.EncodeToString(h[:4])
}

// readStats reads INFO's counters a profile holds.
// Only the first counts among the window's calls: commandstats counts an
// INFO once it has answered.
func readStats(ctx context.Context, p *prober) (*redisadmin.Info, error) {
	i, err := p.c.Info(ctx, "all")
	if p.calls["info"] == 0 {
		p.calls["info"]++
	}
	return i, err
}

// commandDelta is after's calls less before's, less own.
func commandDelta(before, after *redisadmin.Info, own map[string]int64) map[string]int64 {
	prev := map[string]int64{}
	for _, c := range before.Commandstats() {
		prev[c.Command] = c.Calls
	}
	out := map[string]int64{}
	for _, c := range after.Commandstats() {
		if d := c.Calls - prev[c.Command] - own[c.Command]; d > 0 {
			out[c.Command] = d
		}
	}
	return out
}

// typeStats summarises samples by type.
func typeStats(samples []keySample) map[string]*TypeStats {
	by := map[string][]keySample{}
	for _, s := range samples {
		by[s.typ] = append(by[s.typ], s)
	}
	out := map[string]*TypeStats{}
	for t, ss := range by {
		var el, eb []float64
		ttl := 0
		for _, s := range ss {
			el = append(el, float64(s.elements))
			for _, b := range s.elemBytes {
				eb = append(eb, float64(b))
			}
			if s.pttl > 0 {
				ttl++
			}
		}
		out[t] = &TypeStats{Sampled: len(ss), Elements: quantiles(el), ElementBytes: quantiles(eb),
			TTLShare: round3(float64(ttl) / float64(len(ss)))}
	}
	return out
}

func quantiles(v []float64) Quantiles {
	return Quantiles{P50: quantile(v, 0.5), P90: quantile(v, 0.9)}
}

// quantile is the nearest-rank quantile of v (sorted in place).
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[max(i, 0)]
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func infoInt(i *redisadmin.Info, key string) int64 {
	v, _ := i.Int(key)
	return v
}

// dbKeys is database 0's keys (INFO keyspace): the one SCAN samples and
// a replay writes.
func dbKeys(i *redisadmin.Info) int64 {
	for _, db := range i.Keyspace() {
		if db.DB == 0 {
			return db.Keys
		}
	}
	return 0
}
