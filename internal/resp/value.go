package resp

import (
	"bytes"
	"fmt"
	"strings"
)

// Value is a parsed reply. Type is the RESP type byte ('+', '-', ':', '$',
// '*', '_', ',', '#', '!', '=', '(', '%', '~', '>'). Str holds the payload of
// string-like, error, number and boolean types; Elems holds aggregate
// elements (a map's keys and values alternate). Null is set for RESP2 null
// bulk/array and RESP3 '_'.
type Value struct {
	Type  byte
	Str   string
	Elems []Value
	Null  bool
}

// IsError reports whether v is an error reply.
func (v Value) IsError() bool { return v.Type == '-' || v.Type == '!' }

// Err returns v as an error when it is an error reply, else nil.
func (v Value) Err() error {
	if v.IsError() {
		return &ServerError{Msg: v.Str}
	}
	return nil
}

// ServerError is an error reply from the server, such as
// "WRONGTYPE Operation against a key holding the wrong kind of value".
type ServerError struct{ Msg string }

func (e *ServerError) Error() string { return e.Msg }

// Prefix returns the error code, the first word of the message (ERR,
// WRONGTYPE, NOAUTH, MOVED ...).
func (e *ServerError) Prefix() string {
	if i := strings.IndexByte(e.Msg, ' '); i > 0 {
		return e.Msg[:i]
	}
	return e.Msg
}

// MaxDepth bounds the nesting of aggregates Parse builds. Real replies
// nest a few levels (CLUSTER SHARDS, COMMAND DOCS); a hostile server's
// megabytes of "*1" would otherwise exhaust the stack.
const MaxDepth = 64

// ErrTooDeep is a reply nested deeper than MaxDepth.
var ErrTooDeep = fmt.Errorf("%w: aggregates nested deeper than %d levels", ErrProtocol, MaxDepth)

// Parse parses the first complete reply in b into a Value and returns the
// number of bytes it used. It returns n == 0 and a nil error when b holds
// only part of a reply. Attributes (|) are read and dropped.
func Parse(b []byte) (v Value, n int, err error) {
	var st ScanState
	return ParseFrom(b, &st)
}

// ParseFrom is Parse resuming an incomplete reply's scan at st (ScanFrom).
func ParseFrom(b []byte, st *ScanState) (v Value, n int, err error) {
	n, _, _, err = ScanFrom(b, st)
	if err != nil || n == 0 {
		return Value{}, 0, err
	}
	p := parser{b: b[:n]}
	if v = p.value(0); p.tooDeep {
		return Value{}, 0, ErrTooDeep
	}
	return v, n, nil
}

// parser builds a Value from bytes that Scan already validated as one
// complete reply, so it does not re-check framing.
type parser struct {
	b       []byte
	pos     int
	tooDeep bool
}

func (p *parser) line() (byte, []byte) {
	t := p.b[p.pos]
	end := p.pos + bytes.IndexByte(p.b[p.pos:], '\n')
	s := p.b[p.pos+1 : end-1]
	p.pos = end + 1
	return t, s
}

func (p *parser) value(depth int) Value {
	if depth > MaxDepth || p.tooDeep {
		p.tooDeep = true
		return Value{}
	}
	t, s := p.line()
	switch t {
	case '$', '!', '=':
		l, _ := parseLen(s, MaxBulkLen)
		if l < 0 {
			return Value{Type: t, Null: true}
		}
		str := string(p.b[p.pos : p.pos+l])
		p.pos += l + 2
		if t == '=' && len(str) >= 4 {
			str = str[4:] // drop the "txt:" format prefix
		}
		return Value{Type: t, Str: str}
	case '*', '~', '>', '%':
		c, _ := parseLen(s, MaxAggregateLen)
		if c < 0 {
			return Value{Type: t, Null: true}
		}
		if t == '%' {
			c *= 2
		}
		elems := make([]Value, 0, min(c, 1024))
		for i := 0; i < c && !p.tooDeep; i++ {
			elems = append(elems, p.value(depth+1))
		}
		return Value{Type: t, Elems: elems}
	case '|':
		c, _ := parseLen(s, MaxAggregateLen)
		for i := 0; i < 2*c && !p.tooDeep; i++ {
			p.value(depth + 1)
		}
		return p.value(depth + 1) // a chain of attributes nests as deep as arrays
	case '_':
		return Value{Type: t, Null: true}
	}
	return Value{Type: t, Str: string(s)}
}
