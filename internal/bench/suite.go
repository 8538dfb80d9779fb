package bench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// suiteEntry is one test of redis-benchmark's default suite: its printed
// title, the -t names that select it and the command it sends. In args,
// "__data__" stands for the payload and ":{tag}" is the cluster hash-tag slot
// (dropped outside cluster mode), exactly as redis-benchmark 7.2 builds them.
type suiteEntry struct {
	title  string
	names  []string
	args   []string
	inline bool // PING_INLINE is sent as the inline "PING\r\n", not RESP
}

// defaultSuite is redis-benchmark 7.2's suite, in its order.
var defaultSuite = []suiteEntry{
	{title: "PING_INLINE", names: []string{"ping_inline", "ping"}, args: []string{"PING"}, inline: true},
	{title: "PING_MBULK", names: []string{"ping_mbulk", "ping"}, args: []string{"PING"}},
	{title: "SET", names: []string{"set"}, args: []string{"SET", "key{tag}:__rand_int__", "__data__"}},
	{title: "GET", names: []string{"get"}, args: []string{"GET", "key{tag}:__rand_int__"}},
	{title: "INCR", names: []string{"incr"}, args: []string{"INCR", "counter{tag}:__rand_int__"}},
	{title: "LPUSH", names: []string{"lpush"}, args: []string{"LPUSH", "mylist{tag}", "__data__"}},
	{title: "RPUSH", names: []string{"rpush"}, args: []string{"RPUSH", "mylist{tag}", "__data__"}},
	{title: "LPOP", names: []string{"lpop"}, args: []string{"LPOP", "mylist{tag}"}},
	{title: "RPOP", names: []string{"rpop"}, args: []string{"RPOP", "mylist{tag}"}},
	{title: "SADD", names: []string{"sadd"}, args: []string{"SADD", "myset{tag}", "element:__rand_int__"}},
	{title: "HSET", names: []string{"hset"}, args: []string{"HSET", "myhash{tag}", "element:__rand_int__", "__data__"}},
	{title: "SPOP", names: []string{"spop"}, args: []string{"SPOP", "myset{tag}"}},
	{title: "ZADD", names: []string{"zadd"}, args: []string{"ZADD", "myzset{tag}", "__score__", "element:__rand_int__"}},
	{title: "ZPOPMIN", names: []string{"zpopmin"}, args: []string{"ZPOPMIN", "myzset{tag}"}},
	{title: "LPUSH (needed to benchmark LRANGE)", names: []string{"lrange", "lrange_100", "lrange_300", "lrange_500", "lrange_600"}, args: []string{"LPUSH", "mylist{tag}", "__data__"}},
	{title: "LRANGE_100 (first 100 elements)", names: []string{"lrange", "lrange_100"}, args: []string{"LRANGE", "mylist{tag}", "0", "99"}},
	{title: "LRANGE_300 (first 300 elements)", names: []string{"lrange", "lrange_300"}, args: []string{"LRANGE", "mylist{tag}", "0", "299"}},
	{title: "LRANGE_500 (first 500 elements)", names: []string{"lrange", "lrange_500"}, args: []string{"LRANGE", "mylist{tag}", "0", "499"}},
	{title: "LRANGE_600 (first 600 elements)", names: []string{"lrange", "lrange_600"}, args: []string{"LRANGE", "mylist{tag}", "0", "599"}},
	{title: "MSET (10 keys)", names: []string{"mset"}, args: msetArgs()},
	{title: "XADD", names: []string{"xadd"}, args: []string{"XADD", "mystream{tag}", "*", "myfield", "__data__"}},
}

func msetArgs() []string {
	args := []string{"MSET"}
	for range 10 {
		args = append(args, "key{tag}:__rand_int__", "__data__")
	}
	return args
}

// TestNames lists every name -t accepts, for help and error messages.
func TestNames() []string {
	seen := map[string]bool{}
	var names []string
	for _, e := range defaultSuite {
		for _, n := range e.names {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	return names
}

// Test is one benchmark: a title and the commands it sends.
type Test struct {
	Title string
	// Args is the command with placeholders (__rand_int__, __data__,
	// __score__, {tag}); Inline sends it as an inline command.
	Args   []string
	Inline bool
	// Tagged is Args with SlotTag where redis-benchmark puts its cluster
	// tag; set for suite tests that have one. A cluster run sends it
	// instead of Args when the command takes several keys, so they share
	// a slot.
	Tagged []string
	// Mix, when set, replaces Args: a weighted sequence of commands, such
	// as SET and GET in the ratio 1:10.
	Mix []MixPart
	// Source, when set, generates the requests in place of Args and the
	// Mix templates (a workload file, internal/workload): called once per
	// event loop with that loop's random source. Mix then only names the
	// classes Source returns (and gives each its key for --cluster).
	Source func(rng *rand.Rand) Source `json:"-"`
	// SourceSpec is what Source was built from (a workload file's text),
	// sent to --workers processes, which rebuild Source with
	// SourceFactory.
	SourceSpec []byte `json:",omitempty"`
	// Grouped says Source sends requests that take several replies
	// (MULTI ... EXEC, a key's preload commands): not supported with
	// --tls or --connect-rate yet. With --cluster such a request goes
	// to its first command's key's node, and a redirection of it ends
	// the run.
	Grouped bool
}

// SourceFactory rebuilds Test.Source from Test.SourceSpec in a process
// that received the test as JSON (a --workers worker); internal/workload
// sets it.
var SourceFactory func(spec []byte) (func(*rand.Rand) Source, error)

// Source generates a test's requests (Test.Source).
type Source interface {
	// Append appends the next request to dst and returns it, its class
	// (an index into Test.Mix) and how many replies it takes (1, or the
	// commands of a MULTI ... EXEC group).
	Append(dst []byte) (out []byte, class uint8, replies int)
}

// MixPart is one command of a mixed workload and its weight.
type MixPart struct {
	Name   string // label in per-command results, e.g. "SET"
	Args   []string
	Weight int
	// KeyIndex, when > 0, is the argument index of the key --cluster
	// routes by (1 is the first after the command name), for commands
	// whose keys COMMAND INFO cannot place (EVALSHA, FCALL).
	KeyIndex int
}

// SuiteTests returns the default suite's tests selected by names (the -t
// list, case-insensitive; empty selects all). An unknown name is an error
// that lists the valid ones: redis-benchmark silently ignores it and runs
// nothing. randomKeys (-r given) makes ZADD's score random too, as in
// redis-benchmark.
func SuiteTests(names []string, randomKeys bool) ([]Test, error) {
	want := map[string]bool{}
	valid := map[string]bool{}
	for _, n := range TestNames() {
		valid[n] = true
	}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		if !valid[n] {
			return nil, fmt.Errorf("unknown test %q in -t; valid names: %s", n, strings.Join(TestNames(), ","))
		}
		want[n] = true
	}
	var tests []Test
	for _, e := range defaultSuite {
		if len(want) > 0 && !selected(e.names, want) {
			continue
		}
		t := Test{Title: e.title, Args: suiteArgs(e.args, randomKeys), Inline: e.inline}
		if slices.ContainsFunc(e.args, func(a string) bool { return strings.Contains(a, "{tag}") }) {
			t.Tagged = tagArgs(e.args, randomKeys)
		}
		tests = append(tests, t)
	}
	return tests, nil
}

func selected(names []string, want map[string]bool) bool {
	for _, n := range names {
		if want[n] {
			return true
		}
	}
	return false
}

// CustomTest is a user's command line, as in "redline bench -r 1000 lpush
// mylist __rand_int__". Its title is the arguments joined by spaces.
func CustomTest(args []string) Test {
	return Test{Title: strings.Join(args, " "), Args: args}
}

// tagArgs is suiteArgs with the cluster tag as SlotTag.
func tagArgs(args []string, randomKeys bool) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "{tag}", SlotTag)
	}
	return suiteArgs(out, randomKeys)
}

// suiteArgs resolves the suite-only placeholders: the cluster tag (empty
// outside cluster mode) and ZADD's score.
func suiteArgs(args []string, randomKeys bool) []string {
	score := "0"
	if randomKeys {
		score = "__rand_int__"
	}
	out := make([]string, len(args))
	for i, a := range args {
		a = strings.ReplaceAll(a, "{tag}", "")
		out[i] = strings.ReplaceAll(a, "__score__", score)
	}
	return out
}
