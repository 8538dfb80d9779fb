package workload

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"

	"redline/internal/bench"
	"redline/internal/resp"
)

type segKind uint8

const (
	segLit segKind = iota
	segKey
	segValue
	segField
	segMember
	segScore
	segInt
)

// generators are the placeholders an argument may hold.
var generators = map[string]segKind{"{key}": segKey, "{value}": segValue, "{field}": segField,
	"{member}": segMember, "{score}": segScore, "{int}": segInt}

type segment struct {
	kind segKind
	lit  []byte
}

// opGen is one compiled operation.
type opGen struct {
	args     [][]segment
	element  [][]segment
	elements sizeGen
	value    sizeGen
	bytes    []byte // value bytes; values are slices of it
	keys     *keyGen
	pick     func(*rand.Rand) uint64
	members  uint64
	scoreLo  float64
	scoreHi  float64
	ttl      *TTL
	multi    []*opGen
	// tmpl, when set, is the whole command encoded once: each request
	// copies it and writes the key's digits and the value in place (the
	// fast path of commands whose length never changes).
	tmpl           []byte
	keyOffs, vOffs []int
	// verify: values are cut from bytes at an offset set by the key and
	// the field (valueOffset), not drawn.
	verify bool
	mpcg   rand.PCG // memberSize's source, reseeded per key
}

// memberSize is the length of key n's set or sorted-set members: drawn
// from sizes once per key, by a source seeded with n, so the preload and
// every operation name key n's members alike ("m" + a zero-padded index).
func memberSize(sizes *sizeGen, pcg *rand.PCG, n uint64) int {
	pcg.Seed(n, 0x6d656d62)
	r := rand.New(pcg)
	return max(sizes.next(r), 1)
}

// appendMember writes member i of a key whose members are size long.
func appendMember(dst []byte, i uint64, size int) []byte {
	var d [20]byte
	j := len(d)
	for {
		j--
		d[j] = byte('0' + i%10)
		if i /= 10; i == 0 {
			break
		}
	}
	dst = append(dst, 'm')
	for w := len(d) - j + 1; w < size; w++ {
		dst = append(dst, '0')
	}
	return append(dst, d[j:]...)
}

// verifyByteSeed seeds the value bytes of a verify-mode file: every
// writer and the checker cut from the same bytes.
const verifyByteSeed = 0x5eed

// valueOffset is where the value of key n (hash field e, or noField) starts.
func valueOffset(n, e uint64) int {
	h := (n+1)*0x9E3779B97F4A7C15 ^ (e+1)*0xC2B2AE3D27D4EB4F
	h ^= h >> 29
	return int(h % 4096)
}

const noField = ^uint64(0)

// keyGen writes a keyspace's key names.
type keyGen struct {
	prefix  []byte
	width   int
	hashtag bool
	count   uint64
}

func (k *keyGen) append(dst []byte, n uint64) []byte {
	dst = append(dst, k.prefix...)
	if k.hashtag {
		dst = append(dst, '{')
	}
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			break
		}
	}
	for w := len(d) - i; w < k.width; w++ {
		dst = append(dst, '0')
	}
	dst = append(dst, d[i:]...)
	if k.hashtag {
		dst = append(dst, '}')
	}
	return dst
}

// sizeGen draws sizes from a Sizes.
type sizeGen struct {
	fixed, lo, hi int
	cum           []int // histogram: cumulative weights
	sizes         []int
}

func newSizeGen(s Sizes) sizeGen {
	g := sizeGen{fixed: s.Fixed, lo: s.Min, hi: s.Max}
	total := 0
	for _, b := range s.Histogram {
		total += b.Weight
		g.cum = append(g.cum, total)
		g.sizes = append(g.sizes, b.Size)
	}
	return g
}

func (g *sizeGen) next(r *rand.Rand) int {
	switch {
	case g.fixed > 0:
		return g.fixed
	case len(g.cum) > 0:
		w := r.IntN(g.cum[len(g.cum)-1])
		lo, hi := 0, len(g.cum)-1
		for lo < hi {
			mid := (lo + hi) / 2
			if g.cum[mid] > w {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return g.sizes[lo]
	case g.hi > 0:
		return g.lo + r.IntN(g.hi-g.lo+1)
	}
	return 0
}

func (g *sizeGen) largest() int {
	m := max(g.fixed, g.hi)
	for _, s := range g.sizes {
		m = max(m, s)
	}
	return m
}

// valueBytes returns the bytes values are cut from: n bytes plus room to
// start anywhere in the first 4 KiB (random), or a repeated pattern.
func valueBytes(kind string, n int, r *rand.Rand) []byte {
	b := make([]byte, n+4096)
	if kind == "compressible" {
		const pat = "redline-compressible-value-"
		for i := range b {
			b[i] = pat[i%len(pat)]
		}
		return b
	}
	alphabet := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	if kind == "digits" { // integers INCR can take (no leading 0)
		alphabet = "123456789"
	}
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return b
}

func (o *opGen) valueSlice(r *rand.Rand, size int) []byte {
	off := 0
	if len(o.bytes) > size {
		off = r.IntN(min(len(o.bytes)-size, 4096) + 1)
	}
	return o.bytes[off : off+size]
}

// compileArg splits a into literal text and generators; {sha:NAME}
// becomes the script's SHA1 here.
func compileArg(a string, scripts map[string]string) []segment {
	for _, name := range shaRefs(a) {
		a = strings.ReplaceAll(a, "{sha:"+name+"}", ScriptSHA(scripts[name]))
	}
	var segs []segment
	for len(a) > 0 {
		at, ph := -1, ""
		for p := range generators {
			if i := strings.Index(a, p); i >= 0 && (at < 0 || i < at) {
				at, ph = i, p
			}
		}
		if at < 0 {
			segs = append(segs, segment{kind: segLit, lit: []byte(a)})
			break
		}
		if at > 0 {
			segs = append(segs, segment{kind: segLit, lit: []byte(a[:at])})
		}
		segs = append(segs, segment{kind: generators[ph]})
		a = a[at+len(ph):]
	}
	if len(segs) == 0 {
		segs = []segment{{kind: segLit}}
	}
	return segs
}

// ScriptSHA is the SHA1 Redis names a script by (SCRIPT LOAD's reply).
func ScriptSHA(lua string) string {
	h := sha1.Sum([]byte(lua))
	return hex.EncodeToString(h[:])
}

func compileOp(f *File, o *Op, seq *atomic.Uint64, r *rand.Rand) (*opGen, error) {
	g := &opGen{elements: newSizeGen(o.Elements), value: newSizeGen(o.Value.Sizes), ttl: o.TTL,
		members: uint64(max(o.Members, 16)), scoreLo: 0, scoreHi: 1e6}
	if o.Members > 0 {
		g.members = uint64(o.Members)
	}
	if o.Score != nil {
		g.scoreLo, g.scoreHi = o.Score.Min, o.Score.Max
	}
	for i := range o.Multi {
		sub, err := compileOp(f, &o.Multi[i], seq, r)
		if err != nil {
			return nil, err
		}
		g.multi = append(g.multi, sub)
	}
	for _, a := range o.Command {
		g.args = append(g.args, compileArg(a, f.Scripts))
	}
	for _, a := range o.Element {
		g.element = append(g.element, compileArg(a, f.Scripts))
	}
	if ks, ok := f.Keyspaces[o.Keys]; ok {
		g.keys = &keyGen{prefix: []byte(ks.Prefix), width: ks.Width, hashtag: ks.Hashtag, count: ks.Count}
		pick, err := bench.KeyPicker(bench.KeyOptions{Dist: bench.KeyDist(o.Dist), Space: ks.Count, ZipfExp: o.ZipfExp, Sequence: seq})
		if err != nil {
			return nil, err
		}
		g.pick = pick
	}
	g.verify = f.Run.Verify
	if n := g.value.largest(); n > 0 {
		if g.verify {
			r = rand.New(rand.NewPCG(verifyByteSeed, 0))
		}
		g.bytes = valueBytes(o.Value.Bytes, n, r)
	}
	g.compileTemplate()
	return g, nil
}

// compileTemplate sets tmpl when every argument has a fixed length: only
// literals, keys whose numbers fit their width, and values of a fixed size.
func (o *opGen) compileTemplate() {
	if len(o.multi) > 0 || len(o.element) > 0 || o.ttl != nil {
		return
	}
	for _, a := range o.args {
		for _, s := range a {
			switch {
			case s.kind == segLit:
			case s.kind == segKey && o.keys.width >= len(strconv.FormatUint(o.keys.count-1, 10)):
			case s.kind == segValue && o.value.fixed > 0:
			default:
				return
			}
		}
	}
	b := resp.AppendArrayHeader(nil, len(o.args))
	for _, a := range o.args {
		n := 0
		for _, s := range a {
			switch s.kind {
			case segLit:
				n += len(s.lit)
			case segKey:
				n += o.keys.length()
			case segValue:
				n += o.value.fixed
			}
		}
		b = resp.AppendBulkHeader(b, n)
		for _, s := range a {
			switch s.kind {
			case segLit:
				b = append(b, s.lit...)
			case segKey:
				b = o.keys.append(b, 0)
				o.keyOffs = append(o.keyOffs, len(b)-o.keys.width-btoi(o.keys.hashtag))
			case segValue:
				o.vOffs = append(o.vOffs, len(b))
				b = append(b, make([]byte, o.value.fixed)...)
			}
		}
		b = append(b, '\r', '\n')
	}
	o.tmpl = b
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// length is a key's length when its number fits the width.
func (k *keyGen) length() int { return len(k.prefix) + k.width + 2*btoi(k.hashtag) }

// putDigits writes n zero-padded over all of b.
func putDigits(b []byte, n uint64) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
}

// writeTemplate is write's fast path.
func (o *opGen) writeTemplate(dst []byte, r *rand.Rand) []byte {
	start := len(dst)
	dst = append(dst, o.tmpl...)
	var k uint64
	if len(o.keyOffs) > 0 {
		k = o.pick(r)
		for _, off := range o.keyOffs {
			putDigits(dst[start+off:start+off+o.keys.width], k)
		}
	}
	for _, off := range o.vOffs {
		if o.verify && len(o.keyOffs) > 0 {
			v := valueOffset(k, noField)
			copy(dst[start+off:], o.bytes[v:v+o.value.fixed])
			continue
		}
		copy(dst[start+off:], o.valueSlice(r, o.value.fixed))
	}
	return dst
}

// request is one command being written: its arguments' bytes, kept in
// one buffer and cut by offsets.
type request struct {
	buf  []byte
	ends []int
}

func (q *request) reset() { q.buf, q.ends = q.buf[:0], q.ends[:0] }

func (q *request) end() { q.ends = append(q.ends, len(q.buf)) }

// appendTo encodes the arguments as one RESP command.
func (q *request) appendTo(dst []byte) []byte {
	dst = resp.AppendArrayHeader(dst, len(q.ends))
	start := 0
	for _, e := range q.ends {
		dst = resp.AppendBulkHeader(dst, e-start)
		dst = append(dst, q.buf[start:e]...)
		dst = append(dst, '\r', '\n')
		start = e
	}
	return dst
}

// draw is what one command's generators drew: the key, so every {key} of
// a command is the same key.
type draw struct {
	key     uint64
	keyDone bool
	field   uint64 // the last {field} drawn, noField before one
}

func (o *opGen) arg(q *request, segs []segment, r *rand.Rand, d *draw) {
	for _, s := range segs {
		switch s.kind {
		case segLit:
			q.buf = append(q.buf, s.lit...)
		case segKey:
			if !d.keyDone {
				d.key, d.keyDone = o.pick(r), true
			}
			q.buf = o.keys.append(q.buf, d.key)
		case segValue:
			size := o.value.next(r)
			if o.verify && d.keyDone {
				off := valueOffset(d.key, d.field)
				q.buf = append(q.buf, o.bytes[off:off+size]...)
				continue
			}
			q.buf = append(q.buf, o.valueSlice(r, size)...)
		case segField:
			d.field = r.Uint64N(o.members)
			q.buf = append(q.buf, 'f')
			q.buf = strconv.AppendUint(q.buf, d.field, 10)
		case segMember:
			i := r.Uint64N(o.members)
			if d.keyDone && o.value.largest() > 0 {
				q.buf = appendMember(q.buf, i, memberSize(&o.value, &o.mpcg, d.key))
				continue
			}
			q.buf = append(q.buf, 'm')
			q.buf = strconv.AppendUint(q.buf, i, 10)
		case segScore:
			q.buf = strconv.AppendFloat(q.buf, o.scoreLo+r.Float64()*(o.scoreHi-o.scoreLo), 'f', 3, 64)
		case segInt:
			q.buf = strconv.AppendUint(q.buf, r.Uint64N(1_000_000), 10)
		}
	}
	q.end()
}

// write appends the op's command (or MULTI group) and returns its replies.
func (o *opGen) write(dst []byte, q *request, r *rand.Rand) ([]byte, int) {
	if len(o.multi) > 0 {
		dst = resp.AppendCommand(dst, "MULTI")
		for _, sub := range o.multi {
			dst, _ = sub.write(dst, q, r)
		}
		return resp.AppendCommand(dst, "EXEC"), len(o.multi) + 2
	}
	if o.tmpl != nil {
		return o.writeTemplate(dst, r), 1
	}
	q.reset()
	d := draw{field: noField}
	for _, a := range o.args {
		o.arg(q, a, r, &d)
	}
	if len(o.element) > 0 {
		for range o.elements.next(r) {
			for _, a := range o.element {
				o.arg(q, a, r, &d)
			}
		}
	}
	if o.ttl != nil && r.Float64() < o.ttl.Share {
		q.buf = append(q.buf, "PX"...)
		q.end()
		q.buf = strconv.AppendInt(q.buf, ttlMillis(o.ttl, r), 10)
		q.end()
	}
	return q.appendTo(dst), 1
}

func ttlMillis(t *TTL, r *rand.Rand) int64 {
	lo, hi := t.Min.Milliseconds(), t.Max.Milliseconds()
	return max(lo+r.Int64N(hi-lo+1), 1)
}

// source is one event loop's generator of a file's measured phase.
type source struct {
	ops []*opGen
	cum []int
	r   *rand.Rand
	q   request
}

func (s *source) Append(dst []byte) ([]byte, uint8, int) {
	i := 0
	if len(s.ops) > 1 {
		w := s.r.IntN(s.cum[len(s.cum)-1])
		for s.cum[i] <= w {
			i++
		}
	}
	out, n := s.ops[i].write(dst, &s.q, s.r)
	return out, uint8(i), n
}

func init() {
	bench.SourceFactory = func(spec []byte) (func(*rand.Rand) bench.Source, error) {
		f, err := Parse(spec)
		if err != nil {
			return nil, fmt.Errorf("workload file from the coordinator: %w", err)
		}
		t, err := Test(f, "")
		return t.Source, err
	}
}

// HasMulti reports whether f's mix holds a MULTI/EXEC group.
func HasMulti(f *File) bool {
	for _, o := range f.Run.Ops {
		if len(o.Multi) > 0 {
			return true
		}
	}
	return false
}

// Test returns the measured phase of f as a bench test: its requests come
// from the file's generators, one random source per event loop.
func Test(f *File, title string) (bench.Test, error) {
	if title == "" {
		title = cmpOr(f.Name, "workload")
	}
	t := bench.Test{Title: title}
	seq := new(atomic.Uint64)
	cum, total := []int{}, 0
	for _, o := range f.Run.Ops {
		total += o.Weight
		cum = append(cum, total)
		t.Mix = append(t.Mix, mixPart(&o))
		t.Grouped = t.Grouped || len(o.Multi) > 0
	}
	// Compile once up front so a bad generator is an error here, not in
	// a loop.
	if _, err := newSource(f, seq, rand.New(rand.NewPCG(1, 2)), cum); err != nil {
		return t, err
	}
	t.Source = func(r *rand.Rand) bench.Source {
		s, _ := newSource(f, seq, r, cum)
		return s
	}
	spec, err := Marshal(f)
	if err != nil {
		return t, err
	}
	t.SourceSpec = spec
	return t, nil
}

func newSource(f *File, seq *atomic.Uint64, r *rand.Rand, cum []int) (*source, error) {
	s := &source{cum: cum, r: r}
	for i := range f.Run.Ops {
		g, err := compileOp(f, &f.Run.Ops[i], seq, r)
		if err != nil {
			return nil, fmt.Errorf("run.ops.%d: %w", i, err)
		}
		s.ops = append(s.ops, g)
	}
	return s, nil
}

// mixPart names op i for the per-command results, with a sample of its
// arguments so --cluster finds its key (EVALSHA's and FCALL's is the
// third argument after the name).
func mixPart(o *Op) bench.MixPart {
	name := o.Name
	args := o.Command
	if len(o.Multi) > 0 {
		args = []string{"MULTI"}
	}
	if name == "" {
		name = strings.ToUpper(args[0])
	}
	p := bench.MixPart{Name: name, Args: args, Weight: o.Weight}
	for j, a := range args {
		if strings.Contains(a, "{key}") {
			p.KeyIndex = j
			break
		}
	}
	return p
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
