package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
)

// KeyDist names how __rand_int__ values are drawn from [0, keyspace).
type KeyDist string

// The key distributions. Uniform is redis-benchmark's; the others follow
// memtier_benchmark's --key-pattern (G, Z, S).
const (
	KeyUniform    KeyDist = "uniform"
	KeyGaussian   KeyDist = "gaussian"
	KeyZipf       KeyDist = "zipf"
	KeySequential KeyDist = "sequential"
)

// KeyOptions configures the key source.
type KeyOptions struct {
	Dist     KeyDist
	Space    uint64  // -r: values are in [0, Space); 0 disables substitution
	StdDev   float64 // gaussian; default Space/6
	Median   float64 // gaussian; default Space/2
	ZipfExp  float64 // zipf exponent s > 0; default 0.99 (YCSB's constant)
	Sequence *atomic.Uint64
}

// Validate checks the key settings without drawing anything.
func (o KeyOptions) Validate() error {
	if o.Space == 0 {
		switch o.Dist {
		case "", KeyUniform:
			return nil
		}
		return fmt.Errorf("--key-dist %s needs a key space (-r N)", o.Dist)
	}
	_, err := newKeySource(o)
	return err
}

// keySource draws one key number.
type keySource interface{ next(r *rand.Rand) uint64 }

func newKeySource(o KeyOptions) (keySource, error) {
	if o.Space == 0 {
		return nil, nil
	}
	switch o.Dist {
	case "", KeyUniform:
		return uniformKeys{o.Space}, nil
	case KeyGaussian:
		sd, med := o.StdDev, o.Median
		if sd <= 0 {
			sd = float64(o.Space) / 6
		}
		if med <= 0 {
			med = float64(o.Space) / 2
		}
		return gaussianKeys{space: o.Space, median: med, stddev: sd}, nil
	case KeyZipf:
		s := o.ZipfExp
		if s == 0 {
			s = 0.99
		}
		if s <= 0 || math.IsNaN(s) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("zipf exponent must be > 0, got %v", s)
		}
		return newZipfKeys(o.Space, s), nil
	case KeySequential:
		seq := o.Sequence
		if seq == nil {
			seq = new(atomic.Uint64)
		}
		return sequentialKeys{space: o.Space, n: seq}, nil
	}
	return nil, fmt.Errorf("unknown key distribution %q (use uniform, gaussian, zipf or sequential)", o.Dist)
}

type uniformKeys struct{ space uint64 }

func (u uniformKeys) next(r *rand.Rand) uint64 { return r.Uint64N(u.space) }

type gaussianKeys struct {
	space          uint64
	median, stddev float64
}

// next draws from a normal distribution, redrawing values outside the key
// space so the edges are not overweighted (memtier clamps instead).
func (g gaussianKeys) next(r *rand.Rand) uint64 {
	for range 16 {
		v := math.Round(r.NormFloat64()*g.stddev + g.median)
		if v >= 0 && v < float64(g.space) {
			return uint64(v)
		}
	}
	return uint64(g.median)
}

type sequentialKeys struct {
	space uint64
	n     *atomic.Uint64
}

func (s sequentialKeys) next(*rand.Rand) uint64 { return (s.n.Add(1) - 1) % s.space }

// zipfKeys samples ranks 1..n with P(k) proportional to k^-s, for any s > 0,
// by rejection-inversion (Hörmann and Derflinger 1996), in O(1) per draw and
// without the O(n) zeta precomputation; key = rank-1, so key 0 is hottest.
type zipfKeys struct {
	n                  float64
	s                  float64
	hIntegralX1, hIntN float64
	sThreshold         float64
}

func newZipfKeys(n uint64, s float64) *zipfKeys {
	z := &zipfKeys{n: float64(n), s: s}
	z.hIntegralX1 = z.hIntegral(1.5) - 1
	z.hIntN = z.hIntegral(z.n + 0.5)
	z.sThreshold = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

func (z *zipfKeys) next(r *rand.Rand) uint64 {
	for {
		u := z.hIntN + r.Float64()*(z.hIntegralX1-z.hIntN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		k = math.Max(1, math.Min(k, z.n))
		if k-x <= z.sThreshold || u >= z.hIntegral(k+0.5)-z.h(k) {
			return uint64(k) - 1
		}
	}
}

func (z *zipfKeys) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

func (z *zipfKeys) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return helper2((1-z.s)*lx) * lx
}

func (z *zipfKeys) hIntegralInverse(x float64) float64 {
	t := x * (1 - z.s)
	if t < -1 {
		t = -1
	}
	return math.Exp(helper1(t) * x)
}

// helper1 is log1p(x)/x, accurate near 0.
func helper1(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// helper2 is expm1(x)/x, accurate near 0.
func helper2(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3)*(1+0.25*x))
}

// SizeSpec is the value-size setting: a fixed size (-d), a range
// ("100-1000", uniform) or a weighted list ("32:1,1024:3").
type SizeSpec struct {
	Min, Max int
	List     []SizeWeight
}

// SizeWeight is one entry of a weighted size list.
type SizeWeight struct{ Size, Weight int }

// Fixed reports whether every value has the same size.
func (s SizeSpec) Fixed() bool { return len(s.List) == 0 && s.Min == s.Max }

// Largest returns the largest size the spec can produce.
func (s SizeSpec) Largest() int {
	m := s.Max
	for _, e := range s.List {
		m = max(m, e.Size)
	}
	return m
}

// MaxValueSize is redis-benchmark's clamp for -d (1 GiB).
const MaxValueSize = 1 << 30

// ParseSizeRange parses "MIN-MAX".
func ParseSizeRange(v string) (SizeSpec, error) {
	lo, hi, ok := strings.Cut(v, "-")
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if !ok || err1 != nil || err2 != nil || a < 1 || b < a || b > MaxValueSize {
		return SizeSpec{}, fmt.Errorf("bad value size range %q: want MIN-MAX with 1 <= MIN <= MAX <= %d, e.g. 100-1000", v, MaxValueSize)
	}
	return SizeSpec{Min: a, Max: b}, nil
}

// ParseSizeList parses "SIZE:WEIGHT,SIZE:WEIGHT,...".
func ParseSizeList(v string) (SizeSpec, error) {
	var s SizeSpec
	for _, item := range strings.Split(v, ",") {
		sz, w, ok := strings.Cut(strings.TrimSpace(item), ":")
		size, err1 := strconv.Atoi(sz)
		weight, err2 := strconv.Atoi(w)
		if !ok || err1 != nil || err2 != nil || size < 1 || size > MaxValueSize || weight < 1 {
			return SizeSpec{}, fmt.Errorf("bad value size list entry %q in %q: want SIZE:WEIGHT with SIZE in 1..%d and WEIGHT >= 1, e.g. 32:1,1024:3", item, v, MaxValueSize)
		}
		s.List = append(s.List, SizeWeight{size, weight})
	}
	return s, nil
}

// sizeSource draws value sizes.
type sizeSource struct {
	spec  SizeSpec
	cum   []int // cumulative weights for List
	total int
}

func newSizeSource(s SizeSpec) *sizeSource {
	src := &sizeSource{spec: s}
	for _, e := range s.List {
		src.total += e.Weight
		src.cum = append(src.cum, src.total)
	}
	return src
}

func (s *sizeSource) next(r *rand.Rand) int {
	if len(s.cum) > 0 {
		w := r.IntN(s.total)
		for i, c := range s.cum {
			if w < c {
				return s.spec.List[i].Size
			}
		}
	}
	if s.spec.Min == s.spec.Max {
		return s.spec.Min
	}
	return s.spec.Min + r.IntN(s.spec.Max-s.spec.Min+1)
}

// String formats the spec as the flags take it.
func (s SizeSpec) String() string {
	if len(s.List) > 0 {
		var parts []string
		for _, e := range s.List {
			parts = append(parts, fmt.Sprintf("%d:%d", e.Size, e.Weight))
		}
		return strings.Join(parts, ",")
	}
	if s.Min == s.Max {
		return strconv.Itoa(s.Min)
	}
	return fmt.Sprintf("%d-%d", s.Min, s.Max)
}

// KeyPicker returns a function that draws key numbers in [0, o.Space) as
// o says, for generators outside this package (internal/workload).
func KeyPicker(o KeyOptions) (func(*rand.Rand) uint64, error) {
	if o.Space == 0 {
		return nil, fmt.Errorf("a key space of 0 keys")
	}
	ks, err := newKeySource(o)
	if err != nil {
		return nil, err
	}
	return ks.next, nil
}
