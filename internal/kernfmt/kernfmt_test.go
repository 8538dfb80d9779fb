package kernfmt

import (
	"slices"
	"testing"
)

func TestChoices(t *testing.T) {
	cases := []struct {
		in   string
		opts []string
		sel  string
		ok   bool
	}{
		{"always [madvise] never\n", []string{"always", "madvise", "never"}, "madvise", true},
		{"[mq-deadline] kyber none", []string{"mq-deadline", "kyber", "none"}, "mq-deadline", true},
		{"always defer defer+madvise [madvise] never", []string{"always", "defer", "defer+madvise", "madvise", "never"}, "madvise", true},
		{"madvise", []string{"madvise"}, "", false},
		{"[]", []string{"[]"}, "", false},
	}
	for _, c := range cases {
		opts, sel, ok := Choices(c.in)
		if !slices.Equal(opts, c.opts) || sel != c.sel || ok != c.ok {
			t.Errorf("Choices(%q) = %v %q %v", c.in, opts, sel, ok)
		}
	}
	if got := FormatChoices([]string{"always", "madvise", "never"}, "never"); got != "always madvise [never]" {
		t.Errorf("FormatChoices = %q", got)
	}
}

func TestFields(t *testing.T) {
	for in, want := range map[string]string{"1024\t65535\n": "1024 65535", " 4096  131072\t6291456 ": "4096 131072 6291456", "": ""} {
		if got := Fields(in); got != want {
			t.Errorf("Fields(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzChoices: formatting the parsed choices and parsing again gives the
// same selection.
func FuzzChoices(f *testing.F) {
	f.Add("always [madvise] never")
	f.Fuzz(func(t *testing.T, s string) {
		opts, sel, ok := Choices(s)
		if !ok {
			return
		}
		opts2, sel2, ok2 := Choices(FormatChoices(opts, sel))
		if !ok2 || sel2 != sel || !slices.Equal(opts, opts2) {
			t.Fatalf("%q -> %v %q -> %v %q", s, opts, sel, opts2, sel2)
		}
	})
}
