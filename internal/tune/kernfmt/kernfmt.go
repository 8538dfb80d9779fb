// Package kernfmt parses and formats the value forms the kernel uses in the
// files tune writes: CPU lists ("0-3,8"), hex CPU masks grouped in 32-bit
// words ("00000000,000000ff"), bracketed choices ("always [madvise] never")
// and whitespace-separated multi-value sysctls ("32768\t60999"). tune compares
// what it wrote with what it reads back in these normal forms, and the
// kernel simulator (simfs) uses the same functions to format what it stores.
package kernfmt

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// MaxCPU bounds CPU numbers accepted in lists and masks; the kernel's
// NR_CPUS is at most 8192 on the distributions redline supports.
const MaxCPU = 8192

// CPUs is a set of CPU numbers, sorted and without duplicates.
type CPUs []int

// ParseList parses a kernel CPU list such as "0-3,8,10-11". The empty string
// (an empty list) is the empty set. Ranges may carry a stride as in
// "0-7:2" (every second CPU), which the kernel also accepts.
func ParseList(s string) (CPUs, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return CPUs{}, nil
	}
	var out CPUs
	for _, part := range strings.Split(s, ",") {
		lo, hi, stride, err := parseRange(part)
		if err != nil {
			return nil, fmt.Errorf("cpu list %q: %w", s, err)
		}
		for c := lo; c <= hi; c += stride {
			out = append(out, c)
		}
	}
	return normalise(out), nil
}

func parseRange(part string) (lo, hi, stride int, err error) {
	part = strings.TrimSpace(part)
	stride = 1
	if i := strings.IndexByte(part, ':'); i >= 0 {
		// "a-b:used/group" is the kernel's group syntax; only the plain
		// stride form "a-b:n" is accepted here.
		if stride, err = cpuNumber(part[i+1:]); err != nil || stride == 0 {
			return 0, 0, 0, fmt.Errorf("bad stride in %q", part)
		}
		part = part[:i]
	}
	a, b, isRange := strings.Cut(part, "-")
	if lo, err = cpuNumber(a); err != nil {
		return 0, 0, 0, err
	}
	hi = lo
	if isRange {
		if hi, err = cpuNumber(b); err != nil {
			return 0, 0, 0, err
		}
	}
	if hi < lo {
		return 0, 0, 0, fmt.Errorf("range %q ends before it starts", part)
	}
	return lo, hi, stride, nil
}

func cpuNumber(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n >= MaxCPU {
		return 0, fmt.Errorf("%q is not a CPU number (0..%d)", s, MaxCPU-1)
	}
	return n, nil
}

func normalise(c CPUs) CPUs {
	slices.Sort(c)
	return slices.Compact(c)
}

// ParseMask parses a kernel hex CPU mask: 32-bit words separated by commas,
// most significant first, with or without leading zeros or a 0x prefix
// ("3", "00000000,00000003", "0x3").
func ParseMask(s string) (CPUs, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if s == "" {
		return nil, fmt.Errorf("empty cpu mask")
	}
	// Each comma-separated chunk is one 32-bit word, as in the kernel's
	// bitmap_parse: "3,0" is CPUs 32 and 33, not CPUs 0 and 1.
	chunks := strings.Split(s, ",")
	var out CPUs
	for i, chunk := range chunks {
		word := len(chunks) - 1 - i
		if chunk == "" || len(chunk) > 8 && len(chunks) > 1 {
			return nil, fmt.Errorf("cpu mask %q: each comma-separated word holds 1 to 8 hex digits", s)
		}
		cpus, err := parseHexWord(chunk, word*32)
		if err != nil {
			return nil, fmt.Errorf("cpu mask %q: %w", s, err)
		}
		out = append(out, cpus...)
	}
	return normalise(out), nil
}

// parseHexWord parses hex digits (any number when the mask has no commas)
// whose lowest bit is CPU base.
func parseHexWord(hex string, base int) (CPUs, error) {
	var out CPUs
	for i := len(hex) - 1; i >= 0; i-- {
		v, err := strconv.ParseUint(hex[i:i+1], 16, 8)
		if err != nil {
			return nil, fmt.Errorf("%q is not a hex digit", hex[i])
		}
		at := base + (len(hex)-1-i)*4
		for b := 0; b < 4; b++ {
			if v&(1<<b) == 0 {
				continue
			}
			if at+b >= MaxCPU {
				return nil, fmt.Errorf("names a CPU above %d", MaxCPU-1)
			}
			out = append(out, at+b)
		}
	}
	return out, nil
}

// List formats c as the kernel prints CPU lists: "0-3,8".
func (c CPUs) List() string {
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(c[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(c[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Mask formats c as a hex mask of at least width hex digits, grouped in
// 32-bit words as the kernel prints them ("00000000,00000003" for width
// 16). A width of 0 gives the shortest form without grouping of leading
// zero words ("3").
func (c CPUs) Mask(width int) string {
	words := make([]uint32, 1)
	for _, cpu := range c {
		for cpu/32 >= len(words) {
			words = append(words, 0)
		}
		words[cpu/32] |= 1 << (cpu % 32)
	}
	digits := significantDigits(words)
	if width < digits {
		width = digits
	}
	var b strings.Builder
	for d := width - 1; d >= 0; d-- {
		w := 0
		if d/8 < len(words) {
			w = int(words[d/8]>>(4*(d%8))) & 0xf
		}
		b.WriteByte("0123456789abcdef"[w])
		if d%8 == 0 && d > 0 && width > 8 {
			b.WriteByte(',')
		}
	}
	return b.String()
}

func significantDigits(words []uint32) int {
	for i := len(words) - 1; i >= 0; i-- {
		if words[i] != 0 {
			return i*8 + (bits.Len32(words[i])+3)/4
		}
	}
	return 1
}

// MaskWidth returns the number of hex digits in a kernel mask as printed
// ("00000000,00000003" has 16), so a rewrite can keep the file's width.
func MaskWidth(s string) int {
	return len(strings.ReplaceAll(strings.TrimSpace(s), ",", ""))
}

// Equal reports whether a and b hold the same CPUs.
func (c CPUs) Equal(o CPUs) bool { return slices.Equal(c, o) }

// Contains reports whether cpu is in c.
func (c CPUs) Contains(cpu int) bool {
	_, ok := slices.BinarySearch(c, cpu)
	return ok
}

// Choices parses a bracketed choice file such as
// "always [madvise] never" into its options and the selected one.
// ok is false when no option is bracketed.
func Choices(s string) (options []string, selected string, ok bool) {
	for _, f := range strings.Fields(s) {
		if len(f) > 2 && f[0] == '[' && f[len(f)-1] == ']' {
			f = f[1 : len(f)-1]
			selected, ok = f, true
		}
		options = append(options, f)
	}
	return options, selected, ok
}

// FormatChoices prints options with selected in brackets, as the kernel
// does.
func FormatChoices(options []string, selected string) string {
	out := make([]string, len(options))
	for i, o := range options {
		if o == selected {
			o = "[" + o + "]"
		}
		out[i] = o
	}
	return strings.Join(out, " ")
}

// Fields normalises a multi-value sysctl: "1024\t65535\n" and "1024 65535"
// both become "1024 65535".
func Fields(s string) string { return strings.Join(strings.Fields(s), " ") }
