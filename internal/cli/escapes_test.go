package cli

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"redline/internal/testutil/respscript"
)

// hostileError is a server's error reply that would retitle the
// terminal, clear it and rewrite the line if printed as it is.
const hostileError = "ERR \x1b]0;pwned\x07\x1b[2J\r\u202eok"

// Issue 24 item 13 held out: a server's error text reached the terminal
// unescaped through the error redline ends with (a doctor's INFO, a
// bench's failed request), though the renderers escape what they show.
// Whatever redline prints last goes through textsafe.Printable.
func TestServerErrorsEscapedOnTerminal(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		args func(port string) []string
	}{
		{"INFO", func(p string) []string { return []string{"doctor", "-p", p} }},
		{"SET", func(p string) []string {
			return []string{"bench", "-p", p, "-t", "set", "-n", "10", "-c", "1", "--progress", "none"}
		}},
	} {
		s := respscript.Start(t, respscript.Options{Script: func(r respscript.Request) respscript.Action {
			if r.Cmd == c.cmd {
				return respscript.Error(hostileError)
			}
			return respscript.Reply()
		}})
		out, errOut, code := runCLI(t, context.Background(), nil, c.args(strconv.Itoa(s.Port()))...)
		if strings.ContainsAny(out+errOut, "\x1b\x07\r\u202e") {
			t.Errorf("%s: exit %d, the server's controls reached the terminal:\nstdout %q\nstderr %q", c.args("P")[0], code, out, errOut)
		}
	}
}
