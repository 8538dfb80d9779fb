package resp

import (
	"errors"
	"strings"
	"testing"
)

func TestScan(t *testing.T) {
	tests := []struct {
		in   string
		n    int // 0: incomplete
		kind Kind
		err  bool
	}{
		{"+OK\r\n", 5, KindValue, false},
		{"+OK\r\n+OK\r\n", 5, KindValue, false},
		{"-ERR unknown command\r\n", 22, KindError, false},
		{":1000\r\n", 7, KindValue, false},
		{"$3\r\nfoo\r\n", 9, KindValue, false},
		{"$0\r\n\r\n", 6, KindValue, false},
		{"$-1\r\n", 5, KindValue, false},
		{"*-1\r\n", 5, KindValue, false},
		{"*0\r\n", 4, KindValue, false},
		{"*2\r\n$1\r\na\r\n:2\r\n", 15, KindValue, false},
		{"*2\r\n*1\r\n+x\r\n$-1\r\n", 17, KindValue, false},
		{"_\r\n", 3, KindValue, false},
		{",3.14\r\n", 7, KindValue, false},
		{"#t\r\n", 4, KindValue, false},
		{"(3492890328409238509324850943850943825024385\r\n", 46, KindValue, false},
		{"!21\r\nSYNTAX invalid syntax\r\n", 28, KindError, false},
		{"=15\r\ntxt:Some string\r\n", 22, KindValue, false},
		{"%1\r\n+a\r\n:1\r\n", 12, KindValue, false},
		{"~2\r\n+a\r\n+b\r\n", 12, KindValue, false},
		{">2\r\n+invalidate\r\n*1\r\n+k\r\n", 25, KindPush, false},
		{"|1\r\n+ttl\r\n:3\r\n+OK\r\n", 19, KindValue, false},
		// incomplete
		{"", 0, KindValue, false},
		{"+OK\r", 0, KindValue, false},
		{"$3\r\nfo", 0, KindValue, false},
		{"*2\r\n$1\r\na\r\n", 0, KindValue, false},
		{"%1\r\n+a\r\n", 0, KindValue, false},
		// malformed
		{"?\r\n", 0, KindValue, true},
		{"+OK\n", 0, KindValue, true},
		{"$x\r\n", 0, KindValue, true},
		{"$-2\r\n", 0, KindValue, true},
		{"$3\r\nfooXY", 0, KindValue, true},
		{"*99999999999999\r\n", 0, KindValue, true},
		{"$\r\n", 0, KindValue, true},
	}
	for _, tt := range tests {
		n, kind, _, err := Scan([]byte(tt.in))
		if (err != nil) != tt.err {
			t.Errorf("Scan(%q) err = %v, want error %v", tt.in, err, tt.err)
			continue
		}
		if err != nil && !errors.Is(err, ErrProtocol) {
			t.Errorf("Scan(%q) err = %v, not ErrProtocol", tt.in, err)
		}
		if n != tt.n || (n > 0 && kind != tt.kind) {
			t.Errorf("Scan(%q) = %d, kind %d; want %d, kind %d", tt.in, n, kind, tt.n, tt.kind)
		}
	}
}

func TestScanNeedForPartialBulk(t *testing.T) {
	n, _, need, err := Scan([]byte("$10\r\n0123"))
	if n != 0 || err != nil || need != 17 {
		t.Fatalf("Scan partial bulk = %d, need %d, %v; want 0, need 17", n, need, err)
	}
}

func TestScanLongLineWithoutNewline(t *testing.T) {
	_, _, _, err := Scan([]byte("+" + strings.Repeat("a", maxLine+1)))
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("want protocol error for an endless line, got %v", err)
	}
}

func TestParse(t *testing.T) {
	v, n, err := Parse([]byte("*3\r\n$3\r\nfoo\r\n:7\r\n%1\r\n+k\r\n_\r\nrest"))
	if err != nil || n != 28 {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	if v.Type != '*' || len(v.Elems) != 3 || v.Elems[0].Str != "foo" || v.Elems[1].Str != "7" {
		t.Fatalf("Parse = %+v", v)
	}
	if m := v.Elems[2]; m.Type != '%' || len(m.Elems) != 2 || m.Elems[0].Str != "k" || !m.Elems[1].Null {
		t.Fatalf("map = %+v", m)
	}
	if v.Elems[1].Type != ':' {
		t.Fatalf("integer element = %+v", v.Elems[1])
	}
	e, _, _ := Parse([]byte("-WRONGTYPE Operation against a key\r\n"))
	var se *ServerError
	if !errors.As(e.Err(), &se) || se.Prefix() != "WRONGTYPE" {
		t.Fatalf("Err = %v", e.Err())
	}
	vb, _, _ := Parse([]byte("=15\r\ntxt:Some string\r\n"))
	if vb.Str != "Some string" {
		t.Fatalf("verbatim = %q", vb.Str)
	}
}

func TestAppendCommand(t *testing.T) {
	got := string(AppendCommand(nil, "SET", "key", ""))
	want := "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$0\r\n\r\n"
	if got != want {
		t.Fatalf("AppendCommand = %q, want %q", got, want)
	}
}

// A peer that is not a Redis server is named as such with what it sent,
// at once (without waiting for a line end it may never send).
func TestScanNotRESP(t *testing.T) {
	for in, start := range map[string]string{
		"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n": "HTTP/1.1 400 Bad Request",
		"H":                     "H",
		"SSH-2.0-OpenSSH_9.6\n": "SSH-2.0-OpenSSH_9.6",
	} {
		_, _, _, err := Scan([]byte(in))
		var nr *NotRESPError
		if !errors.As(err, &nr) || nr.Start != start || !errors.Is(err, ErrProtocol) {
			t.Errorf("Scan(%q) = %v, want NotRESPError starting %q", in, err, start)
		}
	}
}
