package bench

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"

	"redline/internal/resp"
)

// Placeholders recognised in command arguments.
const (
	// RandInt is replaced, per request and per occurrence, by a 12-digit
	// zero-padded key number when a key space (-r) is set.
	RandInt = "__rand_int__"
	// Data is replaced by the value bytes (-d or a size range/list).
	Data = "__data__"
	// SlotTag is replaced, per request, by a hash tag ("{" + 4 characters
	// + "}") of a random cluster slot, the same at every occurrence in the
	// request: the keys of a multi-key command then share a slot. The
	// suite's multi-key test carries it in cluster mode (Test.Tagged).
	SlotTag = "{__slot__}"
)

const randIntWidth = 12

type segKind uint8

const (
	segLit segKind = iota
	segRand
	segData
	segTag
)

type segment struct {
	kind segKind
	lit  []byte
}

// command is one compiled command template.
type command struct {
	inline bool
	args   [][]segment
	// fixed holds the encoded command when its length never changes; rand
	// lists the offsets of its 12-digit key fields to overwrite per request.
	fixed  []byte
	rand   []int
	tags   []int // offsets of the SlotTag fields in fixed
	tagged bool
}

// compile turns an argument list into a template. Placeholders are only
// recognised when they can be filled: __rand_int__ needs a key space.
// When fixed is non-nil every value is those bytes and the whole request
// is pre-encoded.
func compile(args []string, inline, randomKeys bool, fixed []byte) (command, error) {
	if len(args) == 0 {
		return command{}, fmt.Errorf("empty command")
	}
	c := command{inline: inline}
	for _, a := range args {
		c.args = append(c.args, splitArg([]byte(a), randomKeys))
		c.tagged = c.tagged || strings.Contains(a, SlotTag)
	}
	if inline {
		for _, a := range c.args {
			for _, s := range a {
				if s.kind != segLit {
					return command{}, fmt.Errorf("inline commands cannot hold placeholders")
				}
			}
		}
	}
	if fixed != nil {
		c.fixed, c.rand = c.encodeFixed(fixed)
	}
	return c, nil
}

func splitArg(a []byte, randomKeys bool) []segment {
	var segs []segment
	for len(a) > 0 {
		i, kind, l := nextPlaceholder(a, randomKeys)
		if i < 0 {
			segs = append(segs, segment{kind: segLit, lit: a})
			break
		}
		if i > 0 {
			segs = append(segs, segment{kind: segLit, lit: a[:i]})
		}
		segs = append(segs, segment{kind: kind})
		a = a[i+l:]
	}
	if len(segs) == 0 {
		segs = append(segs, segment{kind: segLit})
	}
	return segs
}

func nextPlaceholder(a []byte, randomKeys bool) (int, segKind, int) {
	r, d := -1, bytes.Index(a, []byte(Data))
	if randomKeys {
		r = bytes.Index(a, []byte(RandInt))
	}
	if t := bytes.Index(a, []byte(SlotTag)); t >= 0 && (r < 0 || t < r) && (d < 0 || t < d) {
		return t, segTag, len(SlotTag)
	}
	switch {
	case r >= 0 && (d < 0 || r < d):
		return r, segRand, len(RandInt)
	case d >= 0:
		return d, segData, len(Data)
	}
	return -1, segLit, 0
}

// encodeFixed encodes the command with zeroed key fields and records where
// they are, so each request is a copy plus a few digit writes.
func (c *command) encodeFixed(data []byte) ([]byte, []int) {
	var tags []int
	defer func() { c.tags = tags }()
	if c.inline {
		var b []byte
		for i, a := range c.args {
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(b, a[0].lit...)
		}
		return append(b, '\r', '\n'), nil
	}
	var b []byte
	var offs []int
	b = resp.AppendArrayHeader(b, len(c.args))
	for _, a := range c.args {
		b = resp.AppendBulkHeader(b, argLen(a, len(data)))
		for _, s := range a {
			switch s.kind {
			case segLit:
				b = append(b, s.lit...)
			case segRand:
				offs = append(offs, len(b))
				b = append(b, "000000000000"...)
			case segTag:
				tags = append(tags, len(b))
				b = append(b, "{0000}"...)
			case segData:
				b = append(b, data...)
			}
		}
		b = append(b, '\r', '\n')
	}
	return b, offs
}

func argLen(a []segment, dataLen int) int {
	n := 0
	for _, s := range a {
		switch s.kind {
		case segLit:
			n += len(s.lit)
		case segRand:
			n += randIntWidth
		case segData:
			n += dataLen
		case segTag:
			n += slotTagWidth
		}
	}
	return n
}

// generator appends requests to an output buffer. Each worker thread owns
// one, with its own random source, so nothing is shared on the hot path.
type generator struct {
	cmds     []command
	schedule []uint8 // command index per step of a mix
	step     int
	keys     keySource
	sizes    *sizeSource
	data     []byte // value bytes; sizes slice a prefix
	rng      *rand.Rand
	tag      [slotTagWidth]byte // this request's SlotTag
	src      Source             // Test.Source: a workload file's requests
	extra    uint16             // replies of the last request beyond the first
}

// appendRequest appends the next request and returns which command of the
// mix it is.
func (g *generator) appendRequest(dst []byte) ([]byte, uint8) {
	if g.src != nil {
		out, cls, n := g.src.Append(dst)
		g.extra = uint16(max(n, 1) - 1)
		return out, cls
	}
	idx := uint8(0)
	if len(g.schedule) > 0 {
		idx = g.schedule[g.step]
		if g.step++; g.step == len(g.schedule) {
			g.step = 0
		}
	}
	c := &g.cmds[idx]
	if c.tagged {
		g.tag = slotTag(uint16(g.rng.IntN(ClusterSlots)))
	}
	if c.fixed != nil {
		start := len(dst)
		dst = append(dst, c.fixed...)
		for _, off := range c.rand {
			putKey(dst[start+off:start+off+randIntWidth], g.keys.next(g.rng))
		}
		for _, off := range c.tags {
			copy(dst[start+off:], g.tag[:])
		}
		return dst, idx
	}
	return g.appendGeneral(dst, c), idx
}

// appendGeneral encodes a request whose length varies (value-size ranges
// or lists).
func (g *generator) appendGeneral(dst []byte, c *command) []byte {
	size := g.sizes.next(g.rng)
	dst = resp.AppendArrayHeader(dst, len(c.args))
	for _, a := range c.args {
		dst = resp.AppendBulkHeader(dst, argLen(a, size))
		for _, s := range a {
			switch s.kind {
			case segLit:
				dst = append(dst, s.lit...)
			case segRand:
				var k [randIntWidth]byte
				putKey(k[:], g.keys.next(g.rng))
				dst = append(dst, k[:]...)
			case segData:
				dst = append(dst, g.data[:size]...)
			case segTag:
				dst = append(dst, g.tag[:]...)
			}
		}
		dst = append(dst, '\r', '\n')
	}
	return dst
}

// putKey writes v as 12 zero-padded decimal digits (redis-benchmark's
// "%012llu"; values beyond 12 digits keep their low digits).
func putKey(b []byte, v uint64) {
	for i := randIntWidth - 1; i >= 0; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
}

// mixSchedule spreads weights evenly over one cycle (smooth weighted
// round-robin), so 1:10 sends one SET after every ten GETs rather than
// eleven in a burst.
func mixSchedule(weights []int) []uint8 {
	total := 0
	for _, w := range weights {
		total += w
	}
	cur := make([]int, len(weights))
	out := make([]uint8, 0, total)
	for range total {
		best := 0
		for i, w := range weights {
			cur[i] += w
			if cur[i] > cur[best] {
				best = i
			}
		}
		cur[best] -= total
		out = append(out, uint8(best))
	}
	return out
}
