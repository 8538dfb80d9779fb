package cli

import (
	"context"
	"strings"
	"testing"
)

// The words of a first day (issue 41): a mistyped sub-command gets a
// suggestion and its own help, a bad number is "not a number", a name that
// does not resolve says so without the resolver's address, and an
// --pid that is not running fails inspect with its prefix once.
func TestFirstDayWords(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args    []string
		code    int
		want    []string
		notWant []string
	}{
		{[]string{"tune", "aply"}, ExitError, []string{`redline tune: unknown command "aply"; did you mean apply?`, "(see redline tune --help)"}, nil},
		{[]string{"doctor", "-p", "abc"}, ExitError, []string{`invalid argument "abc" for "-p, --port" flag: not a number`}, []string{"strconv"}},
		{[]string{"doctor", "--host", "nosuch.invalid", "--rule", "maxmemory"}, ExitError, []string{"the name nosuch.invalid does not resolve"}, []string{"lookup"}},
		{[]string{"inspect", "--pid", "999999", "--no-processes=false"}, ExitFailure, []string{"pid 999999 not described"}, []string{"process 999999: process 999999"}},
	} {
		out, errOut, code := runCLI(t, ctx, nil, tc.args...)
		all := out + errOut
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, code, tc.code, all)
		}
		for _, w := range tc.want {
			if !strings.Contains(all, w) {
				t.Errorf("%v: no %q in:\n%s", tc.args, w, errOut)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(all, w) {
				t.Errorf("%v: %q in:\n%s", tc.args, w, all)
			}
		}
	}
}
