// Package resp encodes Redis commands and reads RESP2 and RESP3 replies.
//
// The load generator's hot path uses Scan, which finds where the next
// complete reply ends without allocating or building values. Admin code uses
// Parse, which builds a Value tree. Both accept every RESP3 type:
//
//	+OK\r\n  -ERR x\r\n  :1\r\n  $3\r\nfoo\r\n  *2\r\n...  _\r\n  ,1.5\r\n  #t\r\n
//	!5\r\nERR x\r\n  =7\r\ntxt:abc\r\n  (123\r\n  %1\r\n...  ~2\r\n...  >3\r\n...  |1\r\n...
package resp

import (
	"bytes"
	"errors"
	"fmt"
)

// Kind says what kind of top-level reply Scan found.
type Kind uint8

const (
	// KindValue is any reply that is not an error or a push.
	KindValue Kind = iota
	// KindError is a simple error (-) or blob error (!).
	KindError
	// KindPush is an out-of-band RESP3 push (>), such as a tracking
	// invalidation; it is not the reply to any command.
	KindPush
)

// MaxBulkLen bounds bulk lengths read from the wire (4 GiB), so a corrupt
// length cannot make the reader try to buffer absurd amounts of data.
const MaxBulkLen = 1 << 32

// MaxAggregateLen bounds the element count of one aggregate.
const MaxAggregateLen = 1 << 31

// ErrProtocol reports bytes that are not RESP.
var ErrProtocol = errors.New("resp: protocol error")

// NotRESPError is a reply whose first byte is no RESP type: the peer is
// not a Redis server (an HTTP server answers "HTTP/1.1 400 Bad Request").
type NotRESPError struct {
	// Start is the start of what the peer sent: its first line, at most
	// 64 bytes.
	Start string
}

func (e *NotRESPError) Error() string {
	return fmt.Sprintf("%v: unknown type byte %q at offset 0 (the reply starts %q)", ErrProtocol, e.Start[0], e.Start)
}

// Unwrap makes a NotRESPError an ErrProtocol.
func (e *NotRESPError) Unwrap() error { return ErrProtocol }

func notRESP(b []byte) error {
	if i := bytes.IndexAny(b, "\r\n"); i > 0 {
		b = b[:i]
	}
	return &NotRESPError{Start: string(b[:min(len(b), 64)])}
}

func protoErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrProtocol}, args...)...)
}

// Scan reports the length of the first complete reply in b and its kind.
// It returns n == 0 and a nil error when b holds only part of a reply, and
// need > 0 when it knows that at least need bytes in total are required
// (a partly received bulk string), so callers can grow their buffer once.
func Scan(b []byte) (n int, kind Kind, need int, err error) {
	var st ScanState
	return ScanFrom(b, &st)
}

// ScanState is where a scan of an incomplete reply stopped: the start of
// the first element not yet complete and how many elements were pending.
// The zero value starts at the beginning.
type ScanState struct{ pos, pending int }

// ScanFrom is Scan resuming where st says an earlier call on a prefix of
// the same bytes stopped, and recording where this one stops when b is
// still incomplete: a reader that appends what arrives scans every byte
// once, not the whole buffer after every read. Reset st to its zero value
// once a reply is consumed.
func ScanFrom(b []byte, st *ScanState) (n int, kind Kind, need int, err error) {
	if len(b) == 0 {
		return 0, 0, 0, nil
	}
	switch b[0] {
	case '-', '!':
		kind = KindError
	case '>':
		kind = KindPush
	}
	pos, pending := 0, 1
	if st.pending > 0 {
		pos, pending = st.pos, st.pending
	}
	for pending > 0 {
		st.pos, st.pending = pos, pending
		if pos >= len(b) {
			return 0, 0, 0, nil
		}
		t := b[pos]
		if pos == 0 && !knownType(t) {
			return 0, 0, 0, notRESP(b) // at once: an HTTP peer may send no CRLF soon
		}
		end := bytes.IndexByte(b[pos:], '\n')
		if end < 0 {
			if len(b)-pos > maxLine {
				return 0, 0, 0, protoErr("line longer than %d bytes", maxLine)
			}
			return 0, 0, 0, nil
		}
		end += pos
		if end < pos+2 || b[end-1] != '\r' {
			return 0, 0, 0, protoErr("line not terminated by CRLF at offset %d", end)
		}
		line := b[pos+1 : end-1]
		pos = end + 1
		pending--
		switch t {
		case '+', '-', ':', ',', '#', '(', '_':
			// single-line types: nothing more to read.
		case '$', '!', '=':
			l, ok := parseLen(line, MaxBulkLen)
			if !ok {
				return 0, 0, 0, protoErr("bad length %q for type %q", line, t)
			}
			if l < 0 {
				continue // null bulk
			}
			if pos+l+2 > len(b) {
				return 0, 0, pos + l + 2, nil
			}
			if b[pos+l] != '\r' || b[pos+l+1] != '\n' {
				return 0, 0, 0, protoErr("bulk of %d bytes not terminated by CRLF", l)
			}
			pos += l + 2
		case '*', '~', '>', '%', '|':
			c, ok := parseLen(line, MaxAggregateLen)
			if !ok {
				return 0, 0, 0, protoErr("bad count %q for type %q", line, t)
			}
			if c < 0 {
				continue // null array
			}
			if t == '%' || t == '|' {
				c *= 2
			}
			if t == '|' {
				pending++ // an attribute precedes the value it describes
			}
			pending += c
		default:
			return 0, 0, 0, protoErr("unknown type byte %q at offset %d", t, pos-len(line)-3)
		}
	}
	*st = ScanState{}
	return pos, kind, 0, nil
}

// knownType reports whether t is a RESP2 or RESP3 type byte.
func knownType(t byte) bool { return bytes.IndexByte([]byte("+-:,#(_$!=*~>%|"), t) >= 0 }

// maxLine bounds a header or simple line; real servers send far less.
const maxLine = 64 << 10

// parseLen parses a decimal length that may be -1 (null). Any other
// negative value, an empty string or a value above max is rejected.
func parseLen(b []byte, max int64) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if b[0] == '-' {
		return -1, len(b) == 2 && b[1] == '1'
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
		if v > max {
			return 0, false
		}
	}
	return int(v), true
}
