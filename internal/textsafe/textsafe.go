// Package textsafe makes text read from outside (a server's reply, a
// cluster node's announced address, a kernel file) safe to print on a
// terminal or in a Markdown file: the one escaping used by every report
// writer.
package textsafe

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Printable escapes the control characters of s that a terminal acts on
// (ESC, CR, backspace, C1 controls, bidi overrides, invalid UTF-8) as Go
// does in a quoted string ("\x1b", "\r", "\u202e"), so a value read from
// outside (a node's announced address, a server's error, a CONFIG value)
// cannot move the cursor, recolour or rewrite the report. Newlines and tabs
// are kept: the renderers lay out lines with them.
func Printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case unsafeRune(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// Unsafe reports whether Printable would change s, or s holds a newline
// or tab: a name (a scenario's, a variant's) that must be refused where
// it enters, not escaped wherever it is shown.
func Unsafe(s string) bool {
	return strings.ContainsAny(s, "\n\t") || Printable(s) != s
}

func unsafeRune(r rune) bool {
	return r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r))
}
