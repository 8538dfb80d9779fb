package knobs

import (
	"fmt"
	"strings"
)

// Markdown is the catalog as a Markdown table: docs/autotune.md holds it
// between its "knobs:begin" and "knobs:end" markers, and a test keeps the
// two the same.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| knob | kind | values | applied by | restart | safety | why (source) |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, k := range catalog {
		restart := ""
		if k.Restart {
			restart = "yes"
		}
		vals := make([]string, len(k.Values))
		for i, v := range k.Values {
			vals[i] = "`" + v + "`"
			if v == "" {
				vals[i] = `""`
			}
		}
		if k.SessionValues() {
			vals = []string{"the session's: each `--build NAME=SPEC`'s NAME"}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s (%s) |\n",
			k.Name, k.Kind, strings.Join(vals, ", "), k.Method(), restart, k.Safety, k.Why, k.Source)
	}
	return b.String()
}
