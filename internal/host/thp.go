package host

import (
	"fmt"
	"strings"
)

// Transparent huge pages: /sys/kernel/mm/transparent_hugepage/
//
//	enabled  always [madvise] never
//	defrag   always defer defer+madvise [madvise] never
func readTHP(r *reader) error {
	const dir = "/sys/kernel/mm/transparent_hugepage"
	t := &THP{}
	for _, f := range []struct {
		name      string
		raw, pick *string
	}{{"enabled", &t.EnabledRaw, &t.Enabled}, {"defrag", &t.DefragRaw, &t.Defrag}} {
		s, ok := r.str(dir + "/" + f.name)
		if !ok {
			continue
		}
		*f.raw = s
		sel, err := parseBracketChoice(s)
		if err != nil {
			r.fail(&ParseError{Path: dir + "/" + f.name, Line: 1, Err: err})
		}
		*f.pick = sel
	}
	if *t != (THP{}) {
		r.snap.THP = t
	}
	return nil
}

// parseBracketChoice returns the bracketed word of "always [madvise] never".
func parseBracketChoice(s string) (string, error) {
	for _, w := range strings.Fields(s) {
		if len(w) > 2 && w[0] == '[' && w[len(w)-1] == ']' {
			return w[1 : len(w)-1], nil
		}
	}
	return "", fmt.Errorf("no [selected] choice in %q", s)
}
