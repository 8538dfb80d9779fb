package workload

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"redline/internal/redisadmin"
)

// Capture defaults: a 10 s window, 1000 keys sampled, at most 1000 of
// capture's own commands a second (docs/workload.md states their cost).
const (
	DefaultCaptureDuration = 10 * time.Second
	DefaultSample          = 1000
	DefaultProbeRate       = 1000
)

// CaptureOptions bounds a capture.
type CaptureOptions struct {
	Duration time.Duration // the commandstats window
	Sample   int           // keys sampled with SCAN
	// ProbeRate is the most commands a second capture sends (its load).
	ProbeRate float64
	// KeepNames writes key prefixes as they are; by default each pattern
	// is a hash (HashPattern) and no word of a key name leaves the server.
	KeepNames bool
}

// Capture reads c's traffic over a window and a sample of its keys, and
// writes a workload file that reproduces their shape. It only reads:
// INFO, SCAN, TYPE, PTTL, OBJECT ENCODING, the types' length commands and
// one element of each sampled key (HRANDFIELD, SRANDMEMBER, ZRANDMEMBER,
// LINDEX, XRANGE COUNT 1). Values are measured, never copied.
func Capture(ctx context.Context, c *redisadmin.Conn, o CaptureOptions) (*File, error) {
	if o.Duration <= 0 {
		o.Duration = DefaultCaptureDuration
	}
	if o.Sample <= 0 {
		o.Sample = DefaultSample
	}
	p := newProber(c, o.ProbeRate)
	before, err := readStats(ctx, p)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	samples, err := p.sample(ctx, o.Sample)
	if err != nil {
		return nil, fmt.Errorf("sampling keys: %w", err)
	}
	if wait := time.Until(start.Add(o.Duration)); wait > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
	}
	after, err := readStats(ctx, p)
	if err != nil {
		return nil, err
	}
	prof := &Profile{Seconds: round3(time.Since(start).Seconds()), Calls: commandDelta(before, after, p.calls),
		Keys: dbKeys(after), UsedMemory: infoInt(after, "used_memory"), Clients: max(infoInt(after, "connected_clients")-1, 1),
		Types: typeStats(samples)}
	f := build(prof, samples, o.KeepNames)
	if err := Validate(f); err != nil {
		return nil, fmt.Errorf("the captured file does not validate (a bug): %w", err)
	}
	return f, nil
}

// group is the sampled keys of one pattern and type.
type group struct {
	pattern, typ string
	samples      []keySample
	name         string
	numeric      bool
}

func groups(samples []keySample) []*group {
	by := map[string]*group{}
	var out []*group
	for _, s := range samples {
		id := s.pattern + "\x00" + s.typ
		g := by[id]
		if g == nil {
			g = &group{pattern: s.pattern, typ: s.typ, numeric: true}
			by[id] = g
			out = append(out, g)
		}
		g.samples = append(g.samples, s)
		g.numeric = g.numeric && s.numeric
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i].samples) > len(out[j].samples) })
	return out
}

// build writes the file: a keyspace and a preload entry per group, and an
// operation per (command, group) weighted by the command's calls and the
// group's share of the sampled keys.
func build(prof *Profile, samples []keySample, keepNames bool) *File {
	f := &File{Version: Version, Name: "captured", Keyspaces: map[string]Keyspace{}, Source: prof,
		Run: Run{Clients: int(prof.Clients)}}
	gs := groups(samples)
	for i, g := range gs {
		g.name = fmt.Sprintf("ks%d", i)
		prefix := HashPattern(g.pattern) + ":"
		if keepNames {
			prefix, _, _ = strings.Cut(g.pattern, "#")
		}
		var kl []float64
		for _, s := range g.samples {
			kl = append(kl, float64(s.keyLen))
		}
		width := max(int(quantile(kl, 0.5))-len(prefix), 1)
		count := uint64(math.Round(float64(prof.Keys) * float64(len(g.samples)) / float64(len(samples))))
		f.Keyspaces[g.name] = Keyspace{Prefix: prefix, Count: max(count, 1), Width: min(width, 20)}
		f.Preload = append(f.Preload, preloadOf(g))
	}
	f.Run.Ops, f.Description = opsOf(prof.Calls, gs, f)
	if len(f.Run.Ops) == 0 {
		f.Run.Ops = []Op{{Name: "PING", Weight: 1, Command: []string{"PING"}}}
	}
	return f
}

func preloadOf(g *group) Preload {
	var el, eb, ttl []float64
	for _, s := range g.samples {
		el = append(el, float64(max(s.elements, 1)))
		for _, b := range s.elemBytes {
			eb = append(eb, float64(max(b, 1)))
		}
		if s.pttl > 0 {
			ttl = append(ttl, float64(s.pttl))
		}
	}
	pl := Preload{Keys: g.name, Type: g.typ, Value: Value{Sizes: histogram(eb)}}
	if g.typ != "string" {
		pl.Elements = histogram(el)
	}
	if g.numeric && g.typ == "string" {
		pl.Value.Bytes = "digits"
	}
	if len(ttl) > 0 {
		sort.Float64s(ttl)
		pl.TTL = &TTL{Share: round3(float64(len(ttl)) / float64(len(g.samples))),
			Min: time.Duration(ttl[0]) * time.Millisecond, Max: time.Duration(ttl[len(ttl)-1]) * time.Millisecond}
	}
	return pl
}

// histogram approximates v by 40 equally likely quantiles (merged where
// equal), which keeps its median and 90th percentile.
func histogram(v []float64) Sizes {
	if len(v) == 0 {
		return Sizes{Fixed: 1}
	}
	sort.Float64s(v)
	const points = 40
	var h []Bucket
	for i := range points {
		x := v[min(int((float64(i)+0.5)/points*float64(len(v))), len(v)-1)]
		size := max(int(math.Round(x)), 1)
		if n := len(h); n > 0 && h[n-1].Size == size {
			h[n-1].Weight++
			continue
		}
		h = append(h, Bucket{Size: size, Weight: 1})
	}
	if len(h) == 1 {
		return Sizes{Fixed: h[0].Size}
	}
	return Sizes{Histogram: h}
}

// replayed is how a captured command is sent again: the type of key it
// takes ("" for any), its arguments, and whether it needs integer values.
type replayed struct {
	typ     string
	args    []string
	numeric bool
}

var replays = map[string]replayed{
	"get": {"string", []string{"GET", "{key}"}, false}, "set": {"string", []string{"SET", "{key}", "{value}"}, false},
	"setex": {"string", []string{"SETEX", "{key}", "3600", "{value}"}, false}, "setnx": {"string", []string{"SETNX", "{key}", "{value}"}, false},
	"getset": {"string", []string{"GETSET", "{key}", "{value}"}, false}, "mget": {"string", []string{"MGET", "{key}"}, false},
	"mset": {"string", []string{"MSET", "{key}", "{value}"}, false}, "strlen": {"string", []string{"STRLEN", "{key}"}, false},
	"incr": {"string", []string{"INCR", "{key}"}, true}, "incrby": {"string", []string{"INCRBY", "{key}", "1"}, true},
	"decr": {"string", []string{"DECR", "{key}"}, true}, "decrby": {"string", []string{"DECRBY", "{key}", "1"}, true},
	"hget": {"hash", []string{"HGET", "{key}", "{field}"}, false}, "hset": {"hash", []string{"HSET", "{key}", "{field}", "{value}"}, false},
	"hmset": {"hash", []string{"HMSET", "{key}", "{field}", "{value}"}, false}, "hsetnx": {"hash", []string{"HSETNX", "{key}", "{field}", "{value}"}, false},
	"hgetall": {"hash", []string{"HGETALL", "{key}"}, false}, "hmget": {"hash", []string{"HMGET", "{key}", "{field}", "{field}"}, false},
	"hdel": {"hash", []string{"HDEL", "{key}", "{field}"}, false}, "hlen": {"hash", []string{"HLEN", "{key}"}, false},
	"hexists": {"hash", []string{"HEXISTS", "{key}", "{field}"}, false}, "hincrby": {"hash", []string{"HINCRBY", "{key}", "n", "1"}, false},
	"hkeys": {"hash", []string{"HKEYS", "{key}"}, false}, "hvals": {"hash", []string{"HVALS", "{key}"}, false},
	"lpush": {"list", []string{"LPUSH", "{key}", "{value}"}, false}, "rpush": {"list", []string{"RPUSH", "{key}", "{value}"}, false},
	"lpop": {"list", []string{"LPOP", "{key}"}, false}, "rpop": {"list", []string{"RPOP", "{key}"}, false},
	"lrange": {"list", []string{"LRANGE", "{key}", "0", "9"}, false}, "llen": {"list", []string{"LLEN", "{key}"}, false},
	"lindex": {"list", []string{"LINDEX", "{key}", "0"}, false},
	"sadd":   {"set", []string{"SADD", "{key}", "{member}"}, false}, "srem": {"set", []string{"SREM", "{key}", "{member}"}, false},
	"smembers": {"set", []string{"SMEMBERS", "{key}"}, false}, "sismember": {"set", []string{"SISMEMBER", "{key}", "{member}"}, false},
	"scard": {"set", []string{"SCARD", "{key}"}, false}, "srandmember": {"set", []string{"SRANDMEMBER", "{key}"}, false},
	"zadd": {"zset", []string{"ZADD", "{key}", "{score}", "{member}"}, false}, "zincrby": {"zset", []string{"ZINCRBY", "{key}", "1", "{member}"}, false},
	"zscore": {"zset", []string{"ZSCORE", "{key}", "{member}"}, false}, "zrank": {"zset", []string{"ZRANK", "{key}", "{member}"}, false},
	"zrevrank": {"zset", []string{"ZREVRANK", "{key}", "{member}"}, false}, "zrange": {"zset", []string{"ZRANGE", "{key}", "0", "9"}, false},
	"zrevrange": {"zset", []string{"ZREVRANGE", "{key}", "0", "9"}, false}, "zrangebyscore": {"zset", []string{"ZRANGEBYSCORE", "{key}", "-inf", "+inf", "LIMIT", "0", "10"}, false},
	"zrem": {"zset", []string{"ZREM", "{key}", "{member}"}, false}, "zcard": {"zset", []string{"ZCARD", "{key}"}, false},
	"zcount": {"zset", []string{"ZCOUNT", "{key}", "-inf", "+inf"}, false},
	"xadd":   {"stream", []string{"XADD", "{key}", "*", "f", "{value}"}, false}, "xlen": {"stream", []string{"XLEN", "{key}"}, false},
	"xrange": {"stream", []string{"XRANGE", "{key}", "-", "+", "COUNT", "10"}, false}, "xrevrange": {"stream", []string{"XREVRANGE", "{key}", "+", "-", "COUNT", "10"}, false},
	"del": {"", []string{"DEL", "{key}"}, false}, "unlink": {"", []string{"UNLINK", "{key}"}, false},
	"exists": {"", []string{"EXISTS", "{key}"}, false}, "expire": {"", []string{"EXPIRE", "{key}", "3600"}, false},
	"pexpire": {"", []string{"PEXPIRE", "{key}", "3600000"}, false}, "ttl": {"", []string{"TTL", "{key}"}, false},
	"pttl": {"", []string{"PTTL", "{key}"}, false}, "type": {"", []string{"TYPE", "{key}"}, false},
	"persist": {"", []string{"PERSIST", "{key}"}, false}, "touch": {"", []string{"TOUCH", "{key}"}, false},
	"ping":    {"-", []string{"PING"}, false},
	"evalsha": {"", []string{"EVALSHA", "{sha:captured}", "1", "{key}"}, false},
	"eval":    {"", []string{"EVAL", capturedScript, "1", "{key}"}, false},
	"fcall":   {"", []string{"FCALL", "redline_noop", "1", "{key}"}, false},
}

// capturedScript stands in for the source's scripts, whose text capture
// cannot read: it does nothing, because the commands a script runs are
// already in commandstats under their own names, and are replayed there.
const capturedScript = "return 1"

const capturedLibrary = "#!lua name=redline_capture\nredis.register_function('redline_noop', function(keys, args) return 1 end)"

// opsOf turns the window's calls into weighted operations, and says in
// the description which commands it could not replay.
func opsOf(calls map[string]int64, gs []*group, f *File) ([]Op, string) {
	var total int64
	for _, n := range calls {
		total += n
	}
	names := make([]string, 0, len(calls))
	for n := range calls {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		return calls[names[i]] > calls[names[j]] || calls[names[i]] == calls[names[j]] && names[i] < names[j]
	})
	var ops []Op
	var skipped []string
	weight := func(n int64, share float64) int {
		return max(int(math.Round(float64(n)*share*100000/float64(total))), 1)
	}
	for _, name := range names {
		n := calls[name]
		if name == "exec" || name == "multi" {
			continue // groupOps
		}
		rp, ok := replays[name]
		targets := targetsOf(rp, gs)
		if !ok || rp.typ != "-" && len(targets) == 0 {
			skipped = append(skipped, fmt.Sprintf("%s (%.1f%%)", name, 100*float64(n)/float64(total)))
			continue
		}
		switch name {
		case "evalsha":
			f.Scripts = map[string]string{"captured": capturedScript}
		case "fcall":
			f.Functions = []string{capturedLibrary}
		}
		if rp.typ == "-" {
			ops = append(ops, Op{Name: strings.ToUpper(name), Weight: weight(n, 1), Command: rp.args})
			continue
		}
		var keys int
		for _, g := range targets {
			keys += len(g.samples)
		}
		for _, g := range targets {
			ops = append(ops, opFor(name, rp, g, f, weight(n, float64(len(g.samples))/float64(keys))))
		}
	}
	ops = groupOps(ops, calls["exec"], total, weight)
	if len(ops) > MaxOps {
		ops = ops[:MaxOps]
		skipped = append(skipped, "the least frequent operations beyond 255")
	}
	desc := fmt.Sprintf("Captured by redline workload capture over %g s.", f.Source.Seconds)
	if len(skipped) > 0 {
		desc += " Not replayed: " + strings.Join(skipped, ", ") + "."
	}
	return ops, desc
}

// groupOps sends the source's transactions again: MULTI/EXEC groups,
// each around the most frequent operation, whose own weight shrinks by as
// much, so every command keeps its share of calls (a group draw sends
// MULTI, the operation and EXEC).
func groupOps(ops []Op, execs, total int64, weight func(int64, float64) int) []Op {
	if execs == 0 || len(ops) == 0 {
		return ops
	}
	e := weight(execs, 1)
	inner := ops[0]
	inner.Name, inner.Weight = "", 0
	if ops[0].Weight > e {
		ops[0].Weight -= e
	} else {
		inner = Op{Command: []string{"PING"}}
	}
	return append(ops, Op{Name: "MULTI/EXEC", Weight: e, Multi: []Op{inner}})
}

// targetsOf lists the groups a command can be sent to: its type's (the
// integer strings for INCR and the like), any for a generic command.
func targetsOf(rp replayed, gs []*group) []*group {
	var out []*group
	for _, g := range gs {
		if (rp.typ == "" || g.typ == rp.typ) && (!rp.numeric || g.numeric) && (rp.typ != "string" || rp.numeric || !g.numeric || rp.args[0] == "GET" || rp.args[0] == "MGET" || rp.args[0] == "STRLEN") {
			out = append(out, g)
		}
	}
	return out
}

func opFor(name string, rp replayed, g *group, f *File, w int) Op {
	pl := f.Preload[indexOf(f, g.name)]
	o := Op{Name: strings.ToUpper(name) + " " + g.name, Weight: w, Command: rp.args, Keys: g.name}
	for _, a := range rp.args {
		// {member} too: a member's length is drawn from the values' sizes
		// per key (memberSize), as the preload drew it.
		if strings.Contains(a, "{value}") || strings.Contains(a, "{member}") {
			o.Value = pl.Value
		}
	}
	if strings.Contains(strings.Join(rp.args, " "), "{field}") || strings.Contains(strings.Join(rp.args, " "), "{member}") {
		var el []float64
		for _, s := range g.samples {
			el = append(el, float64(s.elements))
		}
		// Which fields and members the source's commands touched is not
		// in commandstats: these touch ones 90% of the keys have, so a
		// replay's writes do not grow the keys the source's did not.
		o.Members = max(int(quantile(el, 0.1)), 1)
	}
	if name == "set" && pl.TTL != nil {
		o.TTL = pl.TTL
	}
	return o
}

func indexOf(f *File, keys string) int {
	for i, p := range f.Preload {
		if p.Keys == keys {
			return i
		}
	}
	return 0
}
