package shellwords

import (
	"reflect"
	"strings"
	"testing"
)

func TestJoinSplitRoundTrip(t *testing.T) {
	for _, argv := range [][]string{{"a", "b c", `it's`, "", "$HOME", "x=1,2"}, {"redis-benchmark", "-t", "set"}} {
		got, err := Split(Join(argv))
		if err != nil || !reflect.DeepEqual(got, argv) {
			t.Errorf("Split(Join(%q)) = %q, %v", argv, got, err)
		}
	}
}

func TestSplitErrorsDoNotQuoteTheLine(t *testing.T) {
	for _, bad := range []string{`-a 'PW`, `-a "PW`} {
		_, err := Split(bad)
		if err == nil || strings.Contains(err.Error(), "PW") {
			t.Errorf("Split(%s): %v", bad, err)
		}
	}
}
