package resp

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzScan checks that Scan and Parse never panic, agree with each other,
// and that a complete reply stays complete when more bytes follow it and
// incomplete when cut short.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		"+OK\r\n", "-ERR x\r\n", ":1\r\n", "$3\r\nfoo\r\n", "$-1\r\n", "*2\r\n:1\r\n$1\r\na\r\n",
		"_\r\n", ",1.5\r\n", "#f\r\n", "!3\r\nERR\r\n", "=7\r\ntxt:abc\r\n", "(1\r\n",
		"%1\r\n+a\r\n:1\r\n", "~1\r\n+a\r\n", ">2\r\n+a\r\n+b\r\n", "|1\r\n+a\r\n+b\r\n+OK\r\n",
		"*3\r\n*1\r\n*1\r\n:1\r\n$0\r\n\r\n_\r\n",
		strings.Repeat("*1\r\n", MaxDepth+2) + ":1\r\n", strings.Repeat("|1\r\n", 100) + "+a\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, _, need, err := Scan(b)
		v, pn, perr := Parse(b)
		if errors.Is(perr, ErrTooDeep) {
			return // Scan frames it; Parse refuses to build it
		}
		if (err == nil) != (perr == nil) || n != pn {
			t.Fatalf("Scan = %d, %v; Parse = %d, %v", n, err, pn, perr)
		}
		if err != nil {
			return
		}
		if n == 0 {
			if need > 0 && need <= len(b) {
				t.Fatalf("need %d but already have %d bytes", need, len(b))
			}
			return
		}
		if n > len(b) {
			t.Fatalf("n %d > len %d", n, len(b))
		}
		_ = v
		more := append(bytes.Clone(b[:n]), "+trailing\r\n"...)
		if n2, _, _, err := Scan(more); n2 != n || err != nil {
			t.Fatalf("with trailing bytes: %d, %v; want %d", n2, err, n)
		}
		if n > 1 {
			if n3, _, _, err := Scan(b[:n-1]); n3 != 0 || err != nil {
				t.Fatalf("cut short: %d, %v; want incomplete", n3, err)
			}
		}
	})
}
