package kernel

import "testing"

func TestParseSocketLink(t *testing.T) {
	for _, tc := range []struct {
		in  string
		ino uint64
		ok  bool
	}{
		{"socket:[22220]", 22220, true},
		{"socket:[18446744073709551615]", 1<<64 - 1, true},
		{"socket:[18446744073709551616]", 0, false}, // overflows
		{"socket:[]", 0, false},
		{"socket:[12", 0, false},
		{"socket:[1x]", 0, false},
		{"pipe:[22220]", 0, false},
		{"anon_inode:[eventpoll]", 0, false},
		{"/dev/null", 0, false},
		{"", 0, false},
	} {
		ino, ok := ParseSocketLink([]byte(tc.in))
		if ino != tc.ino || ok != tc.ok {
			t.Errorf("ParseSocketLink(%q) = %d, %v; want %d, %v", tc.in, ino, ok, tc.ino, tc.ok)
		}
	}
}
