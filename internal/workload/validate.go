package workload

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Types are the preload types, as TYPE names them.
var Types = []string{"string", "hash", "set", "zset", "list", "stream"}

// Dists are the key distributions an op may name.
var Dists = []string{"uniform", "zipf", "gaussian", "sequential"}

// Limits that keep one file from asking for more than a run can hold.
const (
	MaxElements = 1 << 20
	MaxValue    = 64 << 20
	MaxOps      = 255
	// MaxRequest bounds one request's bytes (elements times values):
	// the generator holds a request whole.
	MaxRequest = 256 << 20
)

// validate checks f; line names where a dotted path is in the file.
func validate(f *File, line func(string) string) error {
	v := &validator{line: line}
	v.file(f)
	return v.err
}

// Validate checks a File built in code (capture's) as Parse checks one
// read from disk, without line numbers.
func Validate(f *File) error {
	return validate(f, func(string) string { return "" })
}

type validator struct {
	line func(string) string
	err  error
}

func (v *validator) bad(path, format string, args ...any) {
	if v.err == nil {
		v.err = fmt.Errorf("%s%s: %s", v.line(path), path, fmt.Sprintf(format, args...))
	}
}

func (v *validator) file(f *File) {
	if f.Version != Version {
		v.bad("version", "version %d is not one this redline reads (want version: %d)", f.Version, Version)
	}
	names := make([]string, 0, len(f.Keyspaces))
	for n := range f.Keyspaces {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		k := f.Keyspaces[n]
		p := "keyspaces." + n
		if k.Count == 0 {
			v.bad(p, "count must be at least 1")
		}
		if k.Width < 0 || k.Width > 20 {
			v.bad(p+".width", "width must be 0..20 digits, got %d", k.Width)
		}
	}
	for i, pl := range f.Preload {
		p := fmt.Sprintf("preload.%d", i)
		v.keyspace(f, p+".keys", pl.Keys)
		if !slices.Contains(Types, pl.Type) {
			v.bad(p+".type", "unknown type %q (want one of %s)", pl.Type, strings.Join(Types, ", "))
		}
		if pl.Type != "string" {
			v.sizes(p+".elements", pl.Elements, 1, MaxElements, true)
		}
		v.value(p+".value", pl.Value, true)
		v.ttl(p+".ttl", pl.TTL)
		v.request(p, pl.Elements, pl.Value.Sizes)
	}
	for n, s := range f.Scripts {
		if strings.TrimSpace(s) == "" {
			v.bad("scripts."+n, "the script is empty")
		}
	}
	for i, lib := range f.Functions {
		if !strings.HasPrefix(lib, "#!") {
			v.bad(fmt.Sprintf("functions.%d", i), `a library starts with its "#!lua name=NAME" line`)
		}
	}
	if f.Run.Pipeline < 0 || f.Run.Clients < 0 {
		v.bad("run", "pipeline and clients must not be negative")
	}
	if len(f.Run.Ops) == 0 {
		v.bad("run.ops", "no operations: give at least one under run.ops")
	}
	if len(f.Run.Ops) > MaxOps {
		v.bad("run.ops", "at most %d operations, got %d", MaxOps, len(f.Run.Ops))
	}
	for i := range f.Run.Ops {
		v.op(f, fmt.Sprintf("run.ops.%d", i), &f.Run.Ops[i], true)
	}
}

func (v *validator) keyspace(f *File, path, name string) {
	if _, ok := f.Keyspaces[name]; !ok {
		v.bad(path, "no keyspace %q (define it under keyspaces)", name)
	}
}

func (v *validator) op(f *File, p string, o *Op, top bool) {
	if top && o.Weight < 1 {
		v.bad(p+".weight", "weight must be at least 1, got %d", o.Weight)
	}
	if (len(o.Command) == 0) == (len(o.Multi) == 0) {
		v.bad(p, "give command or multi (one of them)")
		return
	}
	if len(o.Multi) > 0 {
		if !top {
			v.bad(p+".multi", "a multi group cannot hold another")
		}
		for i := range o.Multi {
			v.op(f, fmt.Sprintf("%s.multi.%d", p, i), &o.Multi[i], false)
		}
		return
	}
	args := append(append([]string{}, o.Command...), o.Element...)
	uses := func(ph string) bool {
		return slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, ph) })
	}
	if uses("{key}") {
		v.keyspace(f, p+".keys", o.Keys)
	}
	if o.Dist != "" && !slices.Contains(Dists, o.Dist) {
		v.bad(p+".dist", "unknown key distribution %q (want one of %s)", o.Dist, strings.Join(Dists, ", "))
	}
	if o.ZipfExp < 0 {
		v.bad(p+".zipf_exp", "the zipf exponent must be positive")
	}
	if o.Members < 0 {
		v.bad(p+".members", "members must not be negative")
	}
	if len(o.Element) > 0 {
		v.sizes(p+".elements", o.Elements, 1, MaxElements, true)
	}
	if uses("{value}") {
		v.value(p+".value", o.Value, true)
	}
	if len(o.Element) > 0 {
		v.request(p, o.Elements, o.Value.Sizes)
	}
	v.ttl(p+".ttl", o.TTL)
	for _, a := range args {
		for _, name := range shaRefs(a) {
			if _, ok := f.Scripts[name]; !ok {
				v.bad(p+".command", "{sha:%s} names no script (define it under scripts)", name)
			}
		}
	}
}

func (v *validator) sizes(p string, s Sizes, lo, hi int, need bool) {
	kinds := 0
	if s.Fixed != 0 {
		kinds++
	}
	if s.Min != 0 || s.Max != 0 {
		kinds++
	}
	if len(s.Histogram) > 0 {
		kinds++
	}
	switch {
	case kinds == 0 && need:
		v.bad(p, "give fixed, min and max, or histogram")
	case kinds > 1:
		v.bad(p, "give one of fixed, min and max, or histogram")
	case s.Fixed != 0 && (s.Fixed < lo || s.Fixed > hi):
		v.bad(p+".fixed", "%d is outside %d..%d", s.Fixed, lo, hi)
	case (s.Min != 0 || s.Max != 0) && (s.Min < lo || s.Max < s.Min || s.Max > hi):
		v.bad(p, "min %d, max %d: want %d <= min <= max <= %d", s.Min, s.Max, lo, hi)
	}
	for i, b := range s.Histogram {
		if b.Size < lo || b.Size > hi || b.Weight < 1 {
			v.bad(fmt.Sprintf("%s.histogram.%d", p, i), "size %d weight %d: want size %d..%d and weight at least 1", b.Size, b.Weight, lo, hi)
		}
	}
}

// request refuses a request larger than MaxRequest.
func (v *validator) request(p string, elements, value Sizes) {
	e, val := newSizeGen(elements), newSizeGen(value)
	if n := int64(max(e.largest(), 1)) * int64(val.largest()+32); n > MaxRequest {
		v.bad(p, "one request could take %d MiB (elements times value size): at most %d MiB", n>>20, MaxRequest>>20)
	}
}

// MaxReply is the largest reply f's data can produce, for bench's reply
// bound (Options.MaxReply): a whole key of the largest elements and
// values, or 600 of the largest values, and 1 MiB of slack.
func MaxReply(f *File) int {
	el, val := 600, 1
	for _, pl := range f.Preload {
		e, v := newSizeGen(pl.Elements), newSizeGen(pl.Value.Sizes)
		el, val = max(el, e.largest()), max(val, v.largest())
	}
	val = max(val, largestValue(f))
	return int(min(int64(el)*int64(val+64)+1<<20, 1<<30))
}

func (v *validator) value(p string, val Value, need bool) {
	v.sizes(p, val.Sizes, 1, MaxValue, need)
	if val.Bytes != "" && val.Bytes != "random" && val.Bytes != "compressible" && val.Bytes != "digits" {
		v.bad(p+".bytes", "unknown bytes %q (want random, compressible or digits)", val.Bytes)
	}
}

func (v *validator) ttl(p string, t *TTL) {
	if t == nil {
		return
	}
	if t.Share < 0 || t.Share > 1 {
		v.bad(p+".share", "share must be 0..1, got %g", t.Share)
	}
	if t.Min <= 0 || t.Max < t.Min {
		v.bad(p, "min %s, max %s: want 0 < min <= max", t.Min, t.Max)
	}
}

// shaRefs lists the script names of a's {sha:NAME} generators.
func shaRefs(a string) []string {
	var out []string
	for {
		i := strings.Index(a, "{sha:")
		if i < 0 {
			return out
		}
		j := strings.IndexByte(a[i:], '}')
		if j < 0 {
			return out
		}
		out = append(out, a[i+5:i+j])
		a = a[i+j+1:]
	}
}
