package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"

	"redline/internal/bench"
	"redline/internal/redisadmin"
)

// PreloadTests returns one bench test per preload entry: each writes
// every key of its keyspace once, in order, as one request (a key's
// commands, such as XADDs and a PEXPIRE, go together), so --cluster
// routes it by its key and a run of Count requests covers the keyspace.
func PreloadTests(f *File) []PreloadTest {
	var out []PreloadTest
	for i, pl := range f.Preload {
		ks := f.Keyspaces[pl.Keys]
		seq := new(atomic.Uint64)
		pl := pl
		t := bench.Test{Title: fmt.Sprintf("preload %s (%s)", pl.Keys, pl.Type), Grouped: pl.Type == "stream" || pl.TTL != nil && pl.Type != "string",
			Mix: []bench.MixPart{{Name: "preload " + pl.Keys, Args: []string{preloadCommand[pl.Type], "k"}, Weight: 1, KeyIndex: 1}}}
		verify := f.Run.Verify
		t.Source = func(r *rand.Rand) bench.Source {
			p := newPreloader(&pl, ks, seq, r)
			if verify {
				p.verify = true
				p.bytes = valueBytes(pl.Value.Bytes, max(p.value.largest(), 1), rand.New(rand.NewPCG(verifyByteSeed, 0)))
			}
			return p
		}
		out = append(out, PreloadTest{Index: i, Keys: ks.Count, Test: t})
	}
	return out
}

// PreloadTest is one preload entry as a bench test of Keys requests.
type PreloadTest struct {
	Index int
	Keys  uint64
	Test  bench.Test
}

var preloadCommand = map[string]string{"string": "SET", "hash": "HSET", "set": "SADD", "zset": "ZADD", "list": "RPUSH", "stream": "XADD"}

type preloader struct {
	pl       *Preload
	keys     keyGen
	seq      *atomic.Uint64
	r        *rand.Rand
	elements sizeGen
	value    sizeGen
	bytes    []byte
	q        request
	key      []byte
	verify   bool
	n        uint64 // the key being written
	mpcg     rand.PCG
}

func newPreloader(pl *Preload, ks Keyspace, seq *atomic.Uint64, r *rand.Rand) *preloader {
	p := &preloader{pl: pl, keys: keyGen{prefix: []byte(ks.Prefix), width: ks.Width, hashtag: ks.Hashtag, count: ks.Count},
		seq: seq, r: r, elements: newSizeGen(pl.Elements), value: newSizeGen(pl.Value.Sizes)}
	p.bytes = valueBytes(pl.Value.Bytes, max(p.value.largest(), 1), r)
	return p
}

// val is a value; with verify, for field e (noField for a string).
func (p *preloader) val(e uint64) []byte {
	size := max(p.value.next(p.r), 1)
	if p.verify {
		off := valueOffset(p.n, e)
		return p.bytes[off : off+size]
	}
	off := p.r.IntN(min(len(p.bytes)-size, 4096) + 1)
	return p.bytes[off : off+size]
}

func (p *preloader) add(b []byte) { p.q.buf = append(p.q.buf, b...); p.q.end() }

func (p *preloader) addStr(s string) { p.q.buf = append(p.q.buf, s...); p.q.end() }

// member is element i of the key being written (memberSize).
func (p *preloader) member(i, size int) []byte {
	return appendMember(nil, uint64(i), size)
}

// Append writes the next key's commands as one request.
func (p *preloader) Append(dst []byte) ([]byte, uint8, int) {
	n := p.seq.Add(1) - 1
	p.n = n % p.keys.count
	p.key = p.keys.append(p.key[:0], p.n)
	p.q.reset()
	replies := 1
	elems := max(p.elements.next(p.r), 1)
	switch p.pl.Type {
	case "string":
		p.addStr("SET")
		p.add(p.key)
		p.add(p.val(noField))
		if t := p.pl.TTL; t != nil && p.r.Float64() < t.Share {
			p.addStr("PX")
			p.addStr(strconv.FormatInt(ttlMillis(t, p.r), 10))
		}
		return p.q.appendTo(dst), 0, 1
	case "hash":
		p.addStr("HSET")
		p.add(p.key)
		for i := range elems {
			p.addStr("f" + strconv.Itoa(i))
			p.add(p.val(uint64(i)))
		}
	case "set":
		p.addStr("SADD")
		p.add(p.key)
		size := memberSize(&p.value, &p.mpcg, p.n)
		for i := range elems {
			p.add(p.member(i, size))
		}
	case "zset":
		p.addStr("ZADD")
		p.add(p.key)
		size := memberSize(&p.value, &p.mpcg, p.n)
		for i := range elems {
			p.addStr(strconv.FormatFloat(p.r.Float64()*1e6, 'f', 3, 64))
			p.add(p.member(i, size))
		}
	case "list":
		p.addStr("RPUSH")
		p.add(p.key)
		for range elems {
			p.add(p.val(noField))
		}
	case "stream":
		for i := range elems {
			if i > 0 {
				dst = p.q.appendTo(dst)
				p.q.reset()
				replies++
			}
			p.addStr("XADD")
			p.add(p.key)
			p.addStr("*")
			p.addStr("f")
			p.add(p.val(noField))
		}
	}
	dst = p.q.appendTo(dst)
	if t := p.pl.TTL; t != nil && p.r.Float64() < t.Share {
		p.q.reset()
		p.addStr("PEXPIRE")
		p.add(p.key)
		p.addStr(strconv.FormatInt(ttlMillis(t, p.r), 10))
		dst = p.q.appendTo(dst)
		replies++
	}
	return dst, 0, replies
}

// LoadScripts sends SCRIPT LOAD for each script and FUNCTION LOAD REPLACE
// for each library to every address (a cluster's primaries, or the one
// server), so EVALSHA and FCALL find them.
func LoadScripts(ctx context.Context, f *File, addrs []string, o bench.Options) error {
	if len(f.Scripts) == 0 && len(f.Functions) == 0 {
		return nil
	}
	for _, addr := range addrs {
		c, err := redisadmin.Dial(ctx, o.AdminOptions(addr))
		if err != nil {
			return err
		}
		err = loadOn(ctx, c, f)
		c.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", addr, err)
		}
	}
	return nil
}

func loadOn(ctx context.Context, c *redisadmin.Conn, f *File) error {
	for name, lua := range f.Scripts {
		v, err := c.Do(ctx, "SCRIPT", "LOAD", lua)
		if err != nil {
			return fmt.Errorf("script %s: %w", name, err)
		}
		if v.Str != ScriptSHA(lua) {
			return fmt.Errorf("script %s: the server named it %q, not its SHA1", name, v.Str)
		}
	}
	for i, lib := range f.Functions {
		if _, err := c.Do(ctx, "FUNCTION", "LOAD", "REPLACE", lib); err != nil {
			return fmt.Errorf("functions.%d: %w", i, err)
		}
	}
	return nil
}

// Primaries lists the addresses scripts go to: the cluster's primaries
// with cluster, else addr.
func Primaries(ctx context.Context, o bench.Options) ([]string, error) {
	if !o.Cluster {
		return []string{o.Addr}, nil
	}
	c, err := redisadmin.Dial(ctx, o.AdminOptions(o.Addr))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	shards, err := c.ClusterShards(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range shards {
		if p, ok := s.Primary(); ok {
			out = append(out, p.Addr)
		}
	}
	return out, nil
}

// Fill writes f's data set through o's server (its address,
// credentials, cluster routing and clients), one preload entry after the
// other, and loads its scripts. Nothing of it is measured.
func Fill(ctx context.Context, o bench.Options, f *File) error {
	addrs, err := Primaries(ctx, o)
	if err != nil {
		return err
	}
	if err := LoadScripts(ctx, f, addrs, o); err != nil {
		return err
	}
	po := o
	po.Duration, po.Warmup, po.Rate, po.ConnectRate = 0, 0, 0, 0
	po.Pipeline = 16
	po.Clients = min(max(o.Clients, 1), 16)
	po.Progress, po.Ready, po.ProgressFinal = nil, nil, false
	po.Keys = bench.KeyOptions{}
	po.MaxReply = MaxReply(f)
	for _, pt := range PreloadTests(f) {
		po.Requests = int64(pt.Keys)
		if _, err := bench.Run(ctx, po, pt.Test, nil); err != nil {
			return fmt.Errorf("preload.%d (%s): %w", pt.Index, f.Preload[pt.Index].Keys, err)
		}
	}
	return nil
}
