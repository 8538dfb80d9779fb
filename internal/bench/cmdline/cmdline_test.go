package cmdline

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitShell(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{`redis-benchmark -t set,get -c 32`, []string{"redis-benchmark", "-t", "set,get", "-c", "32"}},
		{`eval 'return redis.call("ping")' 0`, []string{"eval", `return redis.call("ping")`, "0"}},
		{`set k "a b\"c"`, []string{"set", "k", `a b"c`}},
		{`a\ b  c`, []string{"a b", "c"}},
		{`x ''`, []string{"x", ""}},
	}
	for _, c := range cases {
		got, err := SplitShell(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitShell(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`a 'b`, `a "b`} {
		if _, err := SplitShell(bad); err == nil {
			t.Errorf("SplitShell(%q) accepted", bad)
		}
	}
}

// TestParseWorkloadWriteupLines parses the write-ups' command lines as
// they were printed.
func TestParseWorkloadWriteupLines(t *testing.T) {
	cases := []struct {
		line    string
		clients int
		tests   []string
		check   func(Workload) bool
	}{
		{"redis-benchmark -t set,get -c 32 -n 500000 -r 500000 --threads 6 -l -q --csv -h 192.168.100.2", 32, []string{"SET", "GET"},
			func(w Workload) bool {
				return w.Options.Threads == 6 && w.Options.Addr == "192.168.100.2:6379" && w.Options.Keys.Space == 500000
			}},
		{"redis-benchmark -h 10.0.0.5 -p 6379 -n 1000000 -c 5000 -q", 5000, nil,
			func(w Workload) bool { return len(w.Tests) == 21 && w.Options.Requests == 1000000 }},
		{"./src/redis-benchmark -h HOST -c 40 -n 5500000 -d 3000 --threads 40 -r 100000 -t SET", 40, []string{"SET"},
			func(w Workload) bool { return w.Options.Sizes.Min == 3000 && w.Options.Addr == "HOST:6379" }},
		{"redis-benchmark -h HOST -t ping,set,get -q -P 16 -d 1000 -n 10000000 -c 50 --csv", 50, []string{"PING_INLINE", "PING_MBULK", "SET", "GET"},
			func(w Workload) bool { return w.Options.Pipeline == 16 }},
		{"redline bench --ratio 1:10 -r 1000 --duration 5s", 50, []string{"SET:GET 1:10"},
			func(w Workload) bool { return w.Options.Duration > 0 && w.Options.Requests == 0 }},
		{"-r 10000 -n 10000 lpush mylist __rand_int__", 50, []string{"lpush mylist __rand_int__"}, func(Workload) bool { return true }},
	}
	for _, c := range cases {
		w, err := ParseWorkload(c.line)
		if err != nil {
			t.Errorf("%q: %v", c.line, err)
			continue
		}
		var titles []string
		for _, tt := range w.Tests {
			titles = append(titles, tt.Title)
		}
		if w.Options.Clients != c.clients || (c.tests != nil && !reflect.DeepEqual(titles, c.tests)) || !c.check(w) {
			t.Errorf("%q: clients %d tests %v options %+v", c.line, w.Options.Clients, titles, w.Options)
		}
	}
	for _, bad := range []string{"redis-benchmark -c x", "redis-benchmark --cluster", "redis-benchmark -t nosuch", "redis-benchmark -x set k"} {
		if _, err := ParseWorkload(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: want an error quoting the line, got %v", bad, err)
		}
	}
}
