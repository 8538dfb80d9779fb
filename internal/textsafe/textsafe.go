// Package textsafe makes text read from outside (a server's reply, a
// cluster node's announced address, a kernel file) safe to print on a
// terminal or in a Markdown file: the one escaping used by every report
// writer.
package textsafe

import (
	"fmt"
	"io"
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

// MarkdownText makes s one line of Markdown that shows s as it is, in a
// paragraph, a list item, a heading or a table cell: control characters
// escaped as Printable does, line breaks and tabs as spaces, and
// backslash escapes before what Markdown or inline HTML would act on:
// \ ` * & | ~ always; < before a letter, / ! or ? (no tag, comment or
// autolink opens without one: "3 < 4" stays); ] before ( [ or : (no
// link or image: "[always]" stays); _ where it could open or close
// emphasis (at a word's edge: snake_case stays); the : of :// and the .
// of www. (GFM would link a bare URL); and a leading # > [ + - = or
// "1." that would start a heading, a quote, a link definition, a list or
// a rule. A value read from a host, a server or someone's scenario (a
// CONFIG value, a variant's name, a reason, a path) cannot add HTML, a
// link, a code span or a table column. (A GFM viewer may still link an
// e-mail address, to itself.)
func MarkdownText(s string) string {
	s = oneLine(s)
	lead := leadingSpace(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte("\\`*&|~", c) >= 0:
			b.WriteByte('\\')
		case c == '<' && i+1 < len(s) && (isLetter(s[i+1]) || strings.IndexByte("/!?", s[i+1]) >= 0):
			// What could open a tag, a comment or an autolink; "3 < 4"
			// stays as it reads.
			b.WriteByte('\\')
		case c == '[' && i == lead, c == ']' && i+1 < len(s) && strings.IndexByte("([:", s[i+1]) >= 0:
			// A link or image needs ]( or ][, a reference definition a
			// line's leading [; a lone [always] stays as it reads.
			b.WriteByte('\\')
		case c == '_' && (i == 0 || i == len(s)-1 || !wordByte(s[i-1]) || !wordByte(s[i+1])):
			b.WriteByte('\\')
		case c == ':' && strings.HasPrefix(s[i+1:], "//"),
			c == '.' && i >= 3 && strings.EqualFold(s[i-3:i], "www") && (i == 3 || !wordByte(s[i-4])):
			// A bare URL would become a link (GFM's autolinks).
			b.WriteByte('\\')
		case i == lead && startsBlock(s[i:]):
			b.WriteByte('\\')
		case c >= '0' && c <= '9' && i == lead:
			// "1. x" and "1) x" start an ordered list: escape the dot.
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j < len(s) && (s[j] == '.' || s[j] == ')') && (j+1 == len(s) || s[j+1] == ' ') {
				b.WriteString(s[i:j] + `\`)
				i = j - 1
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// MarkdownCode makes s a Markdown code span that shows s as it is, in
// running text and in a table cell: control characters escaped as
// Printable does, line breaks as spaces, a fence of more backticks than
// any run in s (with a space inside when s begins or ends with a
// backtick or a space), and each | as \| (GFM reads a table's columns
// before the code spans in them, and shows \| in a cell's span as |).
// An empty s is "".
func MarkdownCode(s string) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	s = strings.ReplaceAll(s, "|", `\|`)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// MarkdownFence is the fence of a fenced code block holding lines: three
// backticks, or more than the longest run of backticks in them, so no
// line of a value ends the block early. The lines themselves go through
// Printable.
func MarkdownFence(lines ...string) string {
	fence := "```"
	for _, l := range lines {
		for strings.Contains(l, fence) {
			fence += "`"
		}
	}
	return fence
}

// oneLine is s through Printable with its line breaks and tabs as spaces.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ", "\t", " ").Replace(Printable(s))
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func leadingSpace(s string) int {
	return len(s) - len(strings.TrimLeft(s, " "))
}

// startsBlock says whether s (a line's text from its first non-space)
// would start a heading, a list item or a setext underline / rule.
func startsBlock(s string) bool {
	switch {
	case s == "":
		return false
	case s[0] == '#' || s[0] == '>':
		return true
	case (s[0] == '-' || s[0] == '+') && (len(s) == 1 || s[1] == ' '):
		return true
	case s[0] == '=' || s[0] == '-':
		return strings.Trim(s, string(s[0])+" ") == ""
	}
	return false
}

// Writer keeps the first write error, so that rendering code (the
// doctor's and the report's text and Markdown) writes without checking
// each line. Everything it writes goes through Printable: text read from
// servers, files and results reaches the reader's terminal only escaped.
type Writer struct {
	w   io.Writer
	err error
}

// NewWriter writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Printf writes the formatted text, made printable, unless an earlier
// write failed.
func (e *Writer) Printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, Printable(fmt.Sprintf(format, args...)))
	}
}

// Err is the first write error.
func (e *Writer) Err() error { return e.err }
