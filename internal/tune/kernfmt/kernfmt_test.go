package kernfmt

import (
	"slices"
	"testing"
)

func TestParseList(t *testing.T) {
	cases := []struct {
		in   string
		want CPUs
		list string
	}{
		{"0-3,8", CPUs{0, 1, 2, 3, 8}, "0-3,8"},
		{"0,1,2,3", CPUs{0, 1, 2, 3}, "0-3"},
		{" 5\n", CPUs{5}, "5"},
		{"3,1,1,2", CPUs{1, 2, 3}, "1-3"},
		{"0-7:2", CPUs{0, 2, 4, 6}, "0,2,4,6"},
		{"", CPUs{}, ""},
		{"10-11,1", CPUs{1, 10, 11}, "1,10-11"},
	}
	for _, c := range cases {
		got, err := ParseList(c.in)
		if err != nil {
			t.Errorf("ParseList(%q): %v", c.in, err)
			continue
		}
		if !got.Equal(c.want) {
			t.Errorf("ParseList(%q) = %v, want %v", c.in, got, c.want)
		}
		if got.List() != c.list {
			t.Errorf("ParseList(%q).List() = %q, want %q", c.in, got.List(), c.list)
		}
	}
	for _, bad := range []string{"a", "3-1", "1-", "-1", "0-9999", "1,,2", "0-3:0"} {
		if _, err := ParseList(bad); err == nil {
			t.Errorf("ParseList(%q) accepted a bad list", bad)
		}
	}
}

func TestParseMask(t *testing.T) {
	cases := []struct {
		in   string
		want CPUs
	}{
		{"3", CPUs{0, 1}},
		{"00000003", CPUs{0, 1}},
		{"00000000,00000003", CPUs{0, 1}},
		{"0x3", CPUs{0, 1}},
		{"ff\n", CPUs{0, 1, 2, 3, 4, 5, 6, 7}},
		{"3,0", CPUs{32, 33}}, // each comma-separated chunk is a 32-bit word
		{"1,00000000", CPUs{32}},
		{"0", nil},
		{"8000000000", CPUs{39}},
	}
	for _, c := range cases {
		got, err := ParseMask(c.in)
		if err != nil {
			t.Errorf("ParseMask(%q): %v", c.in, err)
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("ParseMask(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"", "g", "123456789,0", "1,,2", "0x"} {
		if _, err := ParseMask(bad); err == nil {
			t.Errorf("ParseMask(%q) accepted a bad mask", bad)
		}
	}
}

func TestMaskFormat(t *testing.T) {
	cases := []struct {
		cpus  CPUs
		width int
		want  string
	}{
		{CPUs{0, 1}, 0, "3"},
		{CPUs{0, 1}, 2, "03"},
		{CPUs{0, 1}, 16, "00000000,00000003"},
		{CPUs{32}, 0, "1,00000000"},
		{nil, 0, "0"},
		{nil, 8, "00000000"},
		{CPUs{35}, 9, "8,00000000"},
	}
	for _, c := range cases {
		if got := c.cpus.Mask(c.width); got != c.want {
			t.Errorf("%v.Mask(%d) = %q, want %q", c.cpus, c.width, got, c.want)
		}
	}
}

func TestChoices(t *testing.T) {
	opts, sel, ok := Choices("always [madvise] never\n")
	if !ok || sel != "madvise" || !slices.Equal(opts, []string{"always", "madvise", "never"}) {
		t.Fatalf("Choices = %v %q %v", opts, sel, ok)
	}
	if got := FormatChoices(opts, "never"); got != "always madvise [never]" {
		t.Errorf("FormatChoices = %q", got)
	}
	if _, _, ok := Choices("madvise"); ok {
		t.Error("a plain word has no selected choice")
	}
}

func TestFields(t *testing.T) {
	if got := Fields("1024\t65535\n"); got != "1024 65535" {
		t.Errorf("Fields = %q", got)
	}
}

// FuzzCPUForms: whatever parses as a list or mask formats back to a form
// that parses to the same set.
func FuzzCPUForms(f *testing.F) {
	for _, s := range []string{"0-3,8", "ff", "00000000,00000003", "0-7:2", "3,0", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if cpus, err := ParseList(s); err == nil {
			back, err := ParseList(cpus.List())
			if err != nil || !back.Equal(cpus) {
				t.Fatalf("list %q -> %q -> %v (%v)", s, cpus.List(), back, err)
			}
			m, err := ParseMask(cpus.Mask(0))
			if err != nil || !m.Equal(cpus) {
				t.Fatalf("list %q -> mask %q -> %v (%v)", s, cpus.Mask(0), m, err)
			}
		}
		if cpus, err := ParseMask(s); err == nil {
			back, err := ParseMask(cpus.Mask(MaskWidth(s)))
			if err != nil || !back.Equal(cpus) {
				t.Fatalf("mask %q -> %q -> %v (%v)", s, cpus.Mask(MaskWidth(s)), back, err)
			}
		}
	})
}
