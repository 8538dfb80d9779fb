// Package cpuset is the set of CPU (or NUMA node) numbers in both kernel
// notations, cpulist and cpumask: a leaf that the host model, change values
// and placement share.
package cpuset

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// MaxCPUs bounds the CPU numbers a Set accepts. The kernel's NR_CPUS
// tops out at 8192; the margin keeps hostile input ("0-4294967295") from
// allocating gigabytes.
const MaxCPUs = 1 << 16

// Set is a set of CPU numbers (or NUMA node numbers: the kernel prints
// node lists in the same notation). The zero value is the empty set. It
// reads and writes both kernel notations:
//
//	cpulist  "0-3,8,10-11"          (smp_affinity_list, cpulist, Cpus_allowed_list)
//	cpumask  "ff,00000000,00000001" (smp_affinity, rps_cpus, xps_cpus)
//
// A Set is a value; methods that combine sets return new ones. In JSON
// it is its cpulist string.
type Set struct {
	w []uint64
}

// New returns the set of the given CPUs. It panics on a negative or
// too large CPU number (a programming error, not input).
func New(cpus ...int) Set {
	var s Set
	for _, c := range cpus {
		if c < 0 || c >= MaxCPUs {
			panic(fmt.Sprintf("cpuset.New: cpu %d out of range", c))
		}
		s.Add(c)
	}
	return s
}

// Range returns the set lo..hi inclusive.
func Range(lo, hi int) Set {
	var s Set
	for c := lo; c <= hi; c++ {
		s.Add(c)
	}
	return s
}

// Add puts cpu in the set.
func (s *Set) Add(cpu int) {
	i := cpu / 64
	for len(s.w) <= i {
		s.w = append(s.w, 0)
	}
	s.w[i] |= 1 << uint(cpu%64)
}

// Remove takes cpu out of the set.
func (s *Set) Remove(cpu int) {
	if i := cpu / 64; cpu >= 0 && i < len(s.w) {
		s.w[i] &^= 1 << uint(cpu%64)
	}
}

// Contains reports whether cpu is in the set.
func (s Set) Contains(cpu int) bool {
	i := cpu / 64
	return cpu >= 0 && i < len(s.w) && s.w[i]&(1<<uint(cpu%64)) != 0
}

// Len returns the number of CPUs in the set.
func (s Set) Len() int {
	n := 0
	for _, w := range s.w {
		n += bits.OnesCount64(w)
	}
	return n
}

// IsEmpty reports whether the set has no CPU.
func (s Set) IsEmpty() bool { return s.Len() == 0 }

// Max returns the highest CPU in the set, or -1 if it is empty.
func (s Set) Max() int {
	for i := len(s.w) - 1; i >= 0; i-- {
		if s.w[i] != 0 {
			return i*64 + 63 - bits.LeadingZeros64(s.w[i])
		}
	}
	return -1
}

// CPUs returns the CPUs in ascending order.
func (s Set) CPUs() []int {
	out := make([]int, 0, s.Len())
	for i, w := range s.w {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, i*64+b)
			w &^= 1 << uint(b)
		}
	}
	return out
}

func (s Set) combine(o Set, op func(a, b uint64) uint64) Set {
	n := max(len(s.w), len(o.w))
	out := Set{w: make([]uint64, n)}
	for i := range out.w {
		var a, b uint64
		if i < len(s.w) {
			a = s.w[i]
		}
		if i < len(o.w) {
			b = o.w[i]
		}
		out.w[i] = op(a, b)
	}
	return out.trim()
}

func (s Set) trim() Set {
	n := len(s.w)
	for n > 0 && s.w[n-1] == 0 {
		n--
	}
	s.w = s.w[:n]
	return s
}

// Union returns the CPUs in s or o.
func (s Set) Union(o Set) Set {
	return s.combine(o, func(a, b uint64) uint64 { return a | b })
}

// Intersect returns the CPUs in both s and o.
func (s Set) Intersect(o Set) Set {
	return s.combine(o, func(a, b uint64) uint64 { return a & b })
}

// Difference returns the CPUs in s but not in o.
func (s Set) Difference(o Set) Set {
	return s.combine(o, func(a, b uint64) uint64 { return a &^ b })
}

// Equal reports whether s and o hold the same CPUs.
func (s Set) Equal(o Set) bool {
	return s.Difference(o).IsEmpty() && o.Difference(s).IsEmpty()
}

// IsSubsetOf reports whether every CPU of s is in o.
func (s Set) IsSubsetOf(o Set) bool { return s.Difference(o).IsEmpty() }

// Clone returns an independent copy of s.
func (s Set) Clone() Set { return Set{w: append([]uint64(nil), s.trim().w...)} }

// String returns the cpulist notation ("0-3,8,10-11"; "" for the empty
// set), as the kernel prints it.
func (s Set) String() string { return s.List() }

// List returns the cpulist notation ("0-3,8,10-11"; "" for the empty set).
func (s Set) List() string {
	var b strings.Builder
	cpus := s.CPUs()
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Mask returns the hex cpumask notation in as few digits as the set needs
// ("3", "ff,00000000,00000001"; "0" for the empty set).
func (s Set) Mask() string { return s.MaskWidth(0) }

// MaskWidth returns the hex cpumask notation padded as the kernel prints it
// for nbits CPUs (nr_cpu_ids): ceil(nbits/4) hex digits, with a comma
// between 32-bit words. A set with CPUs beyond nbits is printed wider.
func (s Set) MaskWidth(nbits int) string {
	digits := max((s.Max()+1+3)/4, (nbits+3)/4, 1)
	var b strings.Builder
	for d := digits - 1; d >= 0; d-- {
		word := s.nibble(d)
		b.WriteByte("0123456789abcdef"[word])
		if d > 0 && d%8 == 0 {
			b.WriteByte(',')
		}
	}
	return b.String()
}

// nibble returns the 4 bits of hex digit d (digit 0 = CPUs 0-3).
func (s Set) nibble(d int) uint64 {
	i, sh := d/16, uint(d%16)*4
	if i >= len(s.w) {
		return 0
	}
	return (s.w[i] >> sh) & 0xf
}

// MarshalText writes the cpulist notation.
func (s Set) MarshalText() ([]byte, error) { return []byte(s.List()), nil }

// UnmarshalText reads the cpulist notation.
func (s *Set) UnmarshalText(b []byte) error {
	v, err := ParseList(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ErrCPUSyntax is wrapped by every CPU list or mask parsing error.
var ErrCPUSyntax = errors.New("invalid CPU set")

// ParseList parses the cpulist notation: comma-separated CPUs and
// ranges ("0-3,8,10-11"), including the kernel's strided ranges
// ("0-15:2/4": of each group of 4 starting at 0, the first 2). Surrounding
// whitespace is ignored and an empty list is the empty set.
func ParseList(s string) (Set, error) {
	var set Set
	s = strings.TrimSpace(s)
	if s == "" {
		return set, nil
	}
	for _, part := range strings.Split(s, ",") {
		if err := addListPart(&set, part); err != nil {
			return Set{}, fmt.Errorf("%w: cpulist %.80q: %w", ErrCPUSyntax, s, err)
		}
	}
	return set, nil
}

func addListPart(set *Set, part string) error {
	rng, stride, hasStride := strings.Cut(part, ":")
	lo, hi, err := parseRange(rng)
	if err != nil {
		return err
	}
	used, group := 1, 1
	if hasStride {
		if used, group, err = parseStride(stride); err != nil {
			return err
		}
	}
	for c := lo; c <= hi; c++ {
		if (c-lo)%group < used {
			set.Add(c)
		}
	}
	return nil
}

func parseRange(r string) (lo, hi int, err error) {
	a, b, isRange := strings.Cut(r, "-")
	if lo, err = parseCPUNumber(a); err != nil {
		return 0, 0, err
	}
	hi = lo
	if isRange {
		if hi, err = parseCPUNumber(b); err != nil {
			return 0, 0, err
		}
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("range %q ends before it starts", r)
	}
	return lo, hi, nil
}

func parseStride(s string) (used, group int, err error) {
	u, g, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("stride %q is not USED/GROUP", s)
	}
	if used, err = parseCPUNumber(u); err != nil {
		return 0, 0, err
	}
	if group, err = parseCPUNumber(g); err != nil {
		return 0, 0, err
	}
	if used == 0 || group == 0 || used > group {
		return 0, 0, fmt.Errorf("stride %q needs 0 < USED <= GROUP", s)
	}
	return used, group, nil
}

func parseCPUNumber(s string) (int, error) {
	if s == "" || len(s) > 6 {
		return 0, fmt.Errorf("%q is not a CPU number", s)
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a CPU number", s)
		}
		n = n*10 + int(c-'0')
	}
	if n >= MaxCPUs {
		return 0, fmt.Errorf("CPU %d is beyond the supported %d", n, MaxCPUs)
	}
	return n, nil
}

// ParseMask parses the hex cpumask notation: 32-bit words of up to 8
// hex digits separated by commas, most significant first
// ("ff,00000000,00000001"). Surrounding whitespace is ignored.
func ParseMask(s string) (Set, error) {
	t := strings.TrimSpace(s)
	words := strings.Split(t, ",")
	if len(words)*32 > MaxCPUs {
		return Set{}, fmt.Errorf("%w: cpumask %.80q has more than %d bits", ErrCPUSyntax, s, MaxCPUs)
	}
	var set Set
	for i, word := range words {
		v, err := parseMaskWord(word)
		if err != nil {
			return Set{}, fmt.Errorf("%w: cpumask %.80q: %w", ErrCPUSyntax, s, err)
		}
		base := (len(words) - 1 - i) * 32
		for v != 0 {
			b := bits.TrailingZeros32(v)
			set.Add(base + b)
			v &^= 1 << uint(b)
		}
	}
	return set, nil
}

func parseMaskWord(w string) (uint32, error) {
	if w == "" || len(w) > 8 {
		return 0, fmt.Errorf("word %q is not 1 to 8 hex digits", w)
	}
	v, err := strconv.ParseUint(w, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("word %q is not hex", w)
	}
	return uint32(v), nil
}
