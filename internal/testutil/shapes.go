package testutil

import (
	"regexp"
	"strings"
)

// shapeNumber is a number with the padding before it, which depends on
// the number's width ("%9.3f").
var shapeNumber = regexp.MustCompile(` *-?(\d+(\.\d+)?|nan|inf)`)

// LineShapes reduces a load generator's output to its layout, numbers
// aside: each line as a terminal shows it (the text after its last
// carriage return, so a progress line overwritten in place is gone), with
// every number and the spaces before it replaced by N or " N", and a run of lines of one shape (a
// distribution's rows) collapsed into one. Two outputs with equal shapes
// parse alike.
func LineShapes(out string) []string {
	var shapes []string
	for _, l := range strings.Split(out, "\n") {
		if i := strings.LastIndexByte(l, '\r'); i >= 0 {
			l = l[i+1:]
		}
		l = shapeNumber.ReplaceAllStringFunc(strings.TrimRight(l, " "), func(n string) string {
			if n[0] == ' ' {
				return " N"
			}
			return "N"
		})
		if n := len(shapes); n > 0 && shapes[n-1] == l {
			continue
		}
		shapes = append(shapes, l)
	}
	return shapes
}
