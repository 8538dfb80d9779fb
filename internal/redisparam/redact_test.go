package redisparam

import (
	"strings"
	"testing"
)

// Issue 35, item 5: a refused scenario line was quoted whole into
// result.json and report.md, its requirepass with it. The error quotes
// the line redacted.
func TestRefusedLineRedacted(t *testing.T) {
	for _, line := range []string{"requirepass hunter2", "masterauth hunter2", "requirepass hunter2\x00"} {
		err := CheckLine(line)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: %v; want refused without the password", line, err)
		}
	}
}
