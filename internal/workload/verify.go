package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"

	"redline/internal/bench"
	"redline/internal/redisadmin"
)

// VerifyResult counts what Verify read.
type VerifyResult struct {
	Keys, Values int // keys read, values compared
	Missing      int // keys gone: expired, evicted or deleted
	Wrong        int // values that are not what was written
	// FirstWrong names the first wrong value's key (keys are the file's
	// own names, never the server's).
	FirstWrong string
}

// Verify reads every key (or perKeyspace random ones, when there are more) of each string and hash
// keyspace the file preloads and checks every value against what the
// writers of a verify-mode file write for that key and field: the same
// bytes, whatever size was drawn. It needs run.verify: true (so values
// are a function of the key) and one server (not a cluster, yet).
func Verify(ctx context.Context, o bench.Options, f *File, perKeyspace int) (VerifyResult, error) {
	var res VerifyResult
	if !f.Run.Verify {
		return res, fmt.Errorf("the file does not set run.verify: true: its values are random, nothing to check")
	}
	if o.Cluster {
		return res, fmt.Errorf("verify reads one server; with --cluster it is not supported yet")
	}
	c, err := redisadmin.Dial(ctx, o.AdminOptions(o.Addr))
	if err != nil {
		return res, err
	}
	defer c.Close()
	r := rand.New(rand.NewPCG(1, 2))
	for _, pl := range f.Preload {
		if pl.Type != "string" && pl.Type != "hash" {
			continue
		}
		ks := f.Keyspaces[pl.Keys]
		kg := keyGen{prefix: []byte(ks.Prefix), width: ks.Width, hashtag: ks.Hashtag, count: ks.Count}
		buf := valueBytes(pl.Value.Bytes, largestValue(f), rand.New(rand.NewPCG(verifyByteSeed, 0)))
		all := ks.Count <= uint64(perKeyspace) // then every key, once
		for i := range min(uint64(perKeyspace), ks.Count) {
			n := i
			if !all {
				n = r.Uint64N(ks.Count)
			}
			key := string(kg.append(nil, n))
			if err := verifyKey(ctx, c, pl.Type, key, n, buf, &res); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

func verifyKey(ctx context.Context, c *redisadmin.Conn, typ, key string, n uint64, buf []byte, res *VerifyResult) error {
	res.Keys++
	check := func(e uint64, v string) {
		res.Values++
		off := valueOffset(n, e)
		if off+len(v) > len(buf) || string(buf[off:off+len(v)]) != v {
			res.Wrong++
			if res.FirstWrong == "" {
				res.FirstWrong = key
			}
		}
	}
	if typ == "string" {
		v, err := c.Do(ctx, "GET", key)
		if err != nil {
			return err
		}
		if v.Null {
			res.Missing++
			return nil
		}
		check(noField, v.Str)
		return nil
	}
	v, err := c.Do(ctx, "HGETALL", key)
	if err != nil {
		return err
	}
	if len(v.Elems) == 0 {
		res.Missing++
	}
	for i := 0; i+1 < len(v.Elems); i += 2 {
		name := v.Elems[i].Str
		if len(name) < 2 || name[0] != 'f' {
			continue // a field this file's generators do not write
		}
		e, err := strconv.ParseUint(name[1:], 10, 64)
		if err != nil {
			continue
		}
		check(e, v.Elems[i+1].Str)
	}
	return nil
}

// largestValue is the largest value any writer of f writes.
func largestValue(f *File) int {
	m := 1
	for _, pl := range f.Preload {
		g := newSizeGen(pl.Value.Sizes)
		m = max(m, g.largest())
	}
	var ops func([]Op)
	ops = func(os []Op) {
		for _, o := range os {
			g := newSizeGen(o.Value.Sizes)
			m = max(m, g.largest())
			ops(o.Multi)
		}
	}
	ops(f.Run.Ops)
	return m
}
