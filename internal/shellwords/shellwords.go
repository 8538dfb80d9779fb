// Package shellwords splits and joins command lines with POSIX shell
// quoting. It is a leaf: the bench flag table, the secret redactor and the
// report renderers all use this one splitter and this one quoter.
package shellwords

import (
	"fmt"
	"strings"
	"unicode"
)

// Split splits a command line with POSIX shell quoting ('...', "...",
// backslash escapes); it does not expand anything. Its errors do not quote
// s, which may hold a password: callers say which line it was.
func Split(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' at byte %d", i+1)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inArg = true
		case c == '"':
			i++
			open := i
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated \" at byte %d", open)
			}
			inArg = true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inArg = true
		case c == ' ' || c == '\t' || c == '\n':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

// Join quotes argv so it can be pasted into a shell; Split(Join(a)) is a.
func Join(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// Quote quotes one word for a shell, leaving plain words as they are.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, unsafe) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func unsafe(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
}

// ValidSSHDestination reports whether s can be an ssh destination:
// [user@]host or a Host of the user's ssh config, and nothing ssh would
// take for an option or a shell would split (a lab target's host, a
// bench --workers ssh: host).
func ValidSSHDestination(s string) bool {
	host := s[strings.LastIndexByte(s, '@')+1:] // "-oProxyCommand=..." after "user@" is an option too
	if host == "" || strings.HasPrefix(s, "-") || strings.HasPrefix(host, "-") || strings.ContainsAny(s, " '\"\\;|&$`,") {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) { // control characters: a newline ends the line ssh reads
			return false
		}
	}
	return true
}
