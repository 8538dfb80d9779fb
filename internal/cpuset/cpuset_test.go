package cpuset

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		list string // canonical form; "" means same as in
	}{
		{in: "", want: nil},
		{in: "0", want: []int{0}},
		{in: "0-3,8,10-11", want: []int{0, 1, 2, 3, 8, 10, 11}},
		{in: " 1,0\n", want: []int{0, 1}, list: "0-1"},
		{in: "3,2,1", want: []int{1, 2, 3}, list: "1-3"},
		// the kernel's strided form: of each group of 4 from 0, the first 2
		{in: "0-11:2/4", want: []int{0, 1, 4, 5, 8, 9}, list: "0-1,4-5,8-9"},
		{in: "63-65", want: []int{63, 64, 65}},
		{in: "1023,1024,4095", want: []int{1023, 1024, 4095}, list: "1023-1024,4095"},
	}
	for _, tt := range tests {
		got, err := ParseList(tt.in)
		if err != nil {
			t.Errorf("ParseList(%q): %v", tt.in, err)
			continue
		}
		if !slices.Equal(got.CPUs(), tt.want) {
			t.Errorf("ParseList(%q) = %v, want %v", tt.in, got.CPUs(), tt.want)
		}
		want := tt.list
		if want == "" {
			want = strings.TrimSpace(tt.in)
		}
		if got.List() != want {
			t.Errorf("ParseList(%q).List() = %q, want %q", tt.in, got.List(), want)
		}
	}
}

func TestParseCPUListErrors(t *testing.T) {
	for _, in := range []string{"a", "1-", "-1", "3-1", "1,,2", "0-65536", "99999999999", "0-3:0/2", "0-3:3/2", "0-3:1", "1 2"} {
		_, err := ParseList(in)
		if err == nil {
			t.Errorf("ParseList(%q): no error", in)
			continue
		}
		if !errors.Is(err, ErrCPUSyntax) || !strings.Contains(err.Error(), "cpulist") {
			t.Errorf("ParseList(%q) error %q does not name the problem", in, err)
		}
	}
}

func TestParseCPUMask(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"0", nil},
		{"3\n", []int{0, 1}},
		{"ff,00000000,00000001", []int{0, 64, 65, 66, 67, 68, 69, 70, 71}},
		{"00000000,00000040,00000000,00000000", []int{70}},
		{"80000000,00000000", []int{63}},
		{"1,00000000,00000000", []int{64}},
	}
	for _, tt := range tests {
		got, err := ParseMask(tt.in)
		if err != nil {
			t.Errorf("ParseMask(%q): %v", tt.in, err)
			continue
		}
		if !slices.Equal(got.CPUs(), tt.want) {
			t.Errorf("ParseMask(%q) = %v, want %v", tt.in, got.CPUs(), tt.want)
		}
	}
	for _, in := range []string{"", "g", "0x3", "123456789", "1,,2", ",1", "1,"} {
		if _, err := ParseMask(in); err == nil {
			t.Errorf("ParseMask(%q): no error", in)
		}
	}
}

// The kernel prints masks with ceil(nr_cpu_ids/4) hex digits; MaskWidth
// must give back exactly what it read for machines of every size.
func TestCPUMaskRoundTrip(t *testing.T) {
	tests := []struct {
		mask  string
		nbits int
	}{
		{"3", 2},
		{"f", 4},
		{"ff", 8},
		{"ffffffff", 32},
		{"ff,00000000,00000001", 72},
		{"00000000,00000000,00000000,00000000,00000000,00000040,00000000,00000000", 256}, // the write-up's Kunpeng xps_cpus
		{"0000,00000000,00000000", 80},
		{strings.Repeat("00000000,", 31) + "00000001", 1024},
		{"1," + strings.Repeat("00000000,", 31) + "00000000", 1025},
		{strings.Repeat("ffffffff,", 255) + "ffffffff", 8192},
	}
	for _, tt := range tests {
		set, err := ParseMask(tt.mask)
		if err != nil {
			t.Fatalf("ParseMask(%q): %v", tt.mask, err)
		}
		if got := set.MaskWidth(tt.nbits); got != tt.mask {
			t.Errorf("MaskWidth(%d) of %q = %q", tt.nbits, tt.mask, got)
		}
		back, err := ParseList(set.List())
		if err != nil || !back.Equal(set) {
			t.Errorf("cpulist round trip of %q: %q -> %v (%v)", tt.mask, set.List(), back.CPUs(), err)
		}
	}
}

func TestCPUListRoundTripLarge(t *testing.T) {
	for _, list := range []string{"0-63", "0-64", "0-127", "0-1023", "1,1023-1025,2047", "0-4095,8191", "5,64,128,192,1024"} {
		set, err := ParseList(list)
		if err != nil {
			t.Fatal(err)
		}
		if set.List() != list {
			t.Errorf("List() = %q, want %q", set.List(), list)
		}
		back, err := ParseMask(set.Mask())
		if err != nil || !back.Equal(set) {
			t.Errorf("mask round trip of %q via %q failed: %v", list, set.Mask(), err)
		}
	}
}

func TestCPUSetOps(t *testing.T) {
	a, b := New(0, 1, 2, 64), New(2, 3, 64, 200)
	if got := a.Union(b).List(); got != "0-3,64,200" {
		t.Errorf("Union = %q", got)
	}
	if got := a.Intersect(b).List(); got != "2,64" {
		t.Errorf("Intersect = %q", got)
	}
	if got := a.Difference(b).List(); got != "0-1" {
		t.Errorf("Difference = %q", got)
	}
	if !New(2, 64).IsSubsetOf(a) || a.IsSubsetOf(b) {
		t.Error("IsSubsetOf is wrong")
	}
	if a.Max() != 64 || (Set{}).Max() != -1 || a.Len() != 4 {
		t.Errorf("Max/Len: %d %d", a.Max(), a.Len())
	}
	c := a.Clone()
	c.Add(5)
	c.Remove(0)
	if a.Contains(5) || !a.Contains(0) || !c.Contains(5) || c.Contains(0) {
		t.Error("Clone shares storage with the original")
	}
	if !New(1).Union(New()).Equal(New(1)) || New(300).Difference(New(300)).Len() != 0 {
		t.Error("Equal/empty handling is wrong")
	}
	if (Set{}).Mask() != "0" || (Set{}).List() != "" {
		t.Error("empty set notation is wrong")
	}
}

func TestCPUSetJSON(t *testing.T) {
	var s Set
	if err := s.UnmarshalText([]byte("0-2,70")); err != nil {
		t.Fatal(err)
	}
	b, _ := s.MarshalText()
	if string(b) != "0-2,70" {
		t.Errorf("MarshalText = %q", b)
	}
	if err := s.UnmarshalText([]byte("x")); err == nil {
		t.Error("UnmarshalText accepted garbage")
	}
}
