package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/bench"
	"redline/internal/redistest"
	"redline/internal/resp"
)

const minimal = `version: 1
keyspaces:
  users: {prefix: "user:", count: 100, width: 4}
run:
  ops:
    - command: [GET, "{key}"]
      keys: users
      weight: 1
`

func TestParseErrorsNameTheirLine(t *testing.T) {
	cases := []struct{ name, file, want string }{
		{"unknown field", minimal + "    - command: [GET]\n      weight: 1\n      colour: red\n", "line 11: field colour not found"},
		{"wrong type", strings.Replace(minimal, "count: 100", "count: many", 1), `line 3: "many" is not a whole number`},
		{"no keyspace", strings.Replace(minimal, "keys: users", "keys: people", 1), `line 7: run.ops.0.keys: no keyspace "people"`},
		{"bad dist", minimal + "      dist: pareto\n", `run.ops.0.dist: unknown key distribution "pareto"`},
		{"bad type", minimal + "preload:\n  - {keys: users, type: json, value: {fixed: 3}}\n", `line 10: preload.0.type: unknown type "json"`},
		{"no sizes", minimal + "preload:\n  - {keys: users, type: hash, value: {fixed: 3}}\n", `preload.0.elements: give fixed, min and max, or histogram`},
		{"two sizes", minimal + "preload:\n  - {keys: users, type: string, value: {fixed: 3, min: 1, max: 4}}\n", `give one of fixed`},
		{"ttl share", minimal + "preload:\n  - {keys: users, type: string, value: {fixed: 3}, ttl: {share: 2, min: 1s, max: 2s}}\n", `share must be 0..1`},
		{"version", strings.Replace(minimal, "version: 1", "version: 9", 1), "line 1: version: version 9"},
		{"no ops", "version: 1\nrun: {ops: []}\n", "run.ops: no operations"},
		{"sha", strings.Replace(minimal, `[GET, "{key}"]`, `[EVALSHA, "{sha:nope}", "1", "{key}"]`, 1), "{sha:nope} names no script"},
		{"weight", strings.Replace(minimal, "weight: 1", "weight: 0", 1), "run.ops.0.weight: weight must be at least 1"},
		{"empty", "", "empty workload file"},
		{"huge request", minimal + "preload:\n  - {keys: users, type: hash, elements: {fixed: 100000}, value: {fixed: 10000}}\n", "preload.0: one request could take 956 MiB"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestExamplesParse(t *testing.T) {
	files, _ := filepath.Glob("../../examples/workloads/*.yaml")
	if len(files) < 4 {
		t.Fatalf("want the four examples, found %v", files)
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Error(err)
		}
	}
}

// decode parses every command in b.
func decode(t *testing.T, b []byte) [][]string {
	t.Helper()
	var out [][]string
	for len(b) > 0 {
		v, n, err := resp.Parse(b)
		if err != nil || n == 0 {
			t.Fatalf("bad request bytes %q: %v", b, err)
		}
		var args []string
		for _, e := range v.Elems {
			args = append(args, e.Str)
		}
		out = append(out, args)
		b = b[n:]
	}
	return out
}

func TestGeneratorsWriteWhatTheFileSays(t *testing.T) {
	f, err := Parse([]byte(`version: 1
keyspaces:
  s: {prefix: "sess:", count: 10, width: 3, hashtag: true}
scripts:
  noop: "return 1"
run:
  ops:
    - name: hset
      weight: 1
      command: [HSET, "{key}"]
      keys: s
      element: ["{field}", "{value}"]
      elements: {fixed: 3}
      members: 5
      value: {min: 4, max: 8}
      ttl: {share: 1, min: 1s, max: 2s}
    - name: tx
      weight: 1
      multi:
        - {command: [INCR, "c:{key}"], keys: s}
        - {command: [EVALSHA, "{sha:noop}", "1", "{key}"], keys: s}
`))
	if err != nil {
		t.Fatal(err)
	}
	tt, err := Test(f, "")
	if err != nil {
		t.Fatal(err)
	}
	if !tt.Grouped || len(tt.Mix) != 2 || tt.Mix[0].KeyIndex != 1 {
		t.Fatalf("test: grouped %v, mix %+v", tt.Grouped, tt.Mix)
	}
	src := tt.Source(rand.New(rand.NewPCG(1, 1)))
	seen := map[uint8]bool{}
	for range 50 {
		b, cls, replies := src.Append(nil)
		seen[cls] = true
		cmds := decode(t, b)
		switch cls {
		case 0:
			c := cmds[0]
			if replies != 1 || len(cmds) != 1 || c[0] != "HSET" || len(c) != 2+6+2 || c[8] != "PX" {
				t.Fatalf("hset: %d replies, %q", replies, cmds)
			}
			if !strings.HasPrefix(c[1], "sess:{") || len(c[1]) != len("sess:{000}") {
				t.Errorf("key %q: want sess:{NNN}", c[1])
			}
			for i := 2; i < 8; i += 2 {
				if len(c[i+1]) < 4 || len(c[i+1]) > 8 || c[i][0] != 'f' {
					t.Errorf("field %q value %q", c[i], c[i+1])
				}
			}
		case 1:
			if replies != 4 || len(cmds) != 4 || cmds[0][0] != "MULTI" || cmds[3][0] != "EXEC" || cmds[2][1] != ScriptSHA("return 1") {
				t.Fatalf("multi: %d replies, %q", replies, cmds)
			}
		}
	}
	if !seen[0] || !seen[1] {
		t.Errorf("a weight-1 op never drawn in 50: %v", seen)
	}
}

func TestPreloaderCoversEveryKeyOnce(t *testing.T) {
	f, err := Parse([]byte(`version: 1
keyspaces:
  q: {prefix: "q:", count: 20}
preload:
  - {keys: q, type: stream, elements: {fixed: 2}, value: {fixed: 5}, ttl: {share: 1, min: 1h, max: 1h}}
run:
  ops: [{command: [XLEN, "{key}"], keys: q, weight: 1}]
`))
	if err != nil {
		t.Fatal(err)
	}
	pts := PreloadTests(f)
	if len(pts) != 1 || pts[0].Keys != 20 {
		t.Fatalf("preload tests %+v", pts)
	}
	src := pts[0].Test.Source(rand.New(rand.NewPCG(1, 1)))
	keys := map[string]bool{}
	for range 20 {
		b, _, replies := src.Append(nil)
		cmds := decode(t, b)
		if replies != 3 || len(cmds) != 3 || cmds[0][0] != "XADD" || cmds[2][0] != "PEXPIRE" || cmds[2][2] != "3600000" {
			t.Fatalf("%d replies, %q", replies, cmds)
		}
		keys[cmds[0][1]] = true
	}
	if len(keys) != 20 {
		t.Errorf("%d distinct keys in 20 requests, want 20", len(keys))
	}
}

func TestPatternAndHistogram(t *testing.T) {
	for key, want := range map[string]string{"user:1234:name": "user:#:name", "session:ab12": "session:#", "plain": "#", "a:b": "a:b"} {
		if got := Pattern(key); got != want {
			t.Errorf("Pattern(%q) = %q, want %q", key, got, want)
		}
	}
	if HashPattern("user:#:name") == HashPattern("user:#:mail") || strings.Contains(HashPattern("user:#:name"), "user") {
		t.Error("hashed patterns must differ and hide their words")
	}
	var v []float64
	for i := range 1000 {
		v = append(v, float64(i+1))
	}
	h := histogram(append([]float64{}, v...))
	g := newSizeGen(h)
	r := rand.New(rand.NewPCG(3, 3))
	var drawn []float64
	for range 20000 {
		drawn = append(drawn, float64(g.next(r)))
	}
	q, p := quantiles(v), quantiles(drawn)
	if d := (p.P50 - q.P50) / q.P50; d > 0.05 || d < -0.05 {
		t.Errorf("median %v drawn from the histogram, source %v", p.P50, q.P50)
	}
	if d := (p.P90 - q.P90) / q.P90; d > 0.05 || d < -0.05 {
		t.Errorf("p90 %v drawn from the histogram, source %v", p.P90, q.P90)
	}
}

// BenchmarkSourceAppend is the generator's cost per request on a SET/GET
// mix (docs/benchmarks.md compares bench's CPU per request with it and
// with the -t set,get line).
func BenchmarkSourceAppend(b *testing.B) {
	f, err := Parse([]byte(`version: 1
keyspaces:
  k: {prefix: "key:", count: 100000, width: 12}
run:
  ops:
    - {name: SET, weight: 1, command: [SET, "{key}", "{value}"], keys: k, value: {fixed: 3}}
    - {name: GET, weight: 1, command: [GET, "{key}"], keys: k}
`))
	if err != nil {
		b.Fatal(err)
	}
	tt, _ := Test(f, "")
	src := tt.Source(rand.New(rand.NewPCG(1, 1)))
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf, _, _ = src.Append(buf[:0])
	}
}

// TestDocsSchemaParses keeps docs/workload.md's schema example valid.
func TestDocsSchemaParses(t *testing.T) {
	b, err := os.ReadFile("../../docs/workload.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "```yaml\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/workload.md has no yaml block")
	}
	if _, err := Parse([]byte(block)); err != nil {
		t.Errorf("docs/workload.md's schema example: %v", err)
	}
}

// TestVerifyFindsWhatWasWritten: a verify-mode file's preload and writes
// (strings by template and by the general path, hash fields) read back
// as written; a value changed behind the file's back is found wrong, and
// a deleted key is counted missing.
func TestVerifyFindsWhatWasWritten(t *testing.T) {
	s := redistest.Start(t)
	f, err := Parse([]byte(`version: 1
keyspaces:
  s: {prefix: "s:", count: 200, width: 4}
  h: {prefix: "h:", count: 100}
preload:
  - {keys: s, type: string, value: {min: 5, max: 50}}
  - {keys: h, type: hash, elements: {min: 2, max: 6}, value: {fixed: 20}}
run:
  verify: true
  ops:
    - {weight: 2, command: [SET, "{key}", "{value}"], keys: s, value: {fixed: 30}}
    - {weight: 1, command: [SET, "{key}", "{value}"], keys: s, value: {min: 1, max: 40}, ttl: {share: 0.5, min: 1h, max: 2h}}
    - {weight: 2, command: [HSET, "{key}", "{field}", "{value}"], keys: h, members: 8, value: {min: 1, max: 20}}
    - {weight: 1, command: [GET, "{key}"], keys: s}
`))
	if err != nil {
		t.Fatal(err)
	}
	o := bench.DefaultOptions()
	o.Addr, o.Clients = s.Addr(), 4
	ctx := context.Background()
	if err := Fill(ctx, o, f); err != nil {
		t.Fatal(err)
	}
	tt, _ := Test(f, "")
	o.Requests = 3000
	if _, err := bench.Run(ctx, o, tt, nil); err != nil {
		t.Fatal(err)
	}
	res, err := Verify(ctx, o, f, 1000)
	if err != nil || res.Wrong != 0 || res.Missing != 0 || res.Keys != 300 || res.Values < 500 {
		t.Fatalf("verify after the run: %+v, %v", res, err)
	}
	c := redistest.Client(t, s)
	for i := range 200 {
		redistest.Do(t, c, "SET", fmt.Sprintf("s:%04d", i), "tampered")
	}
	redistest.Do(t, c, "DEL", "h:0", "h:1")
	res, err = Verify(ctx, o, f, 1000)
	if err != nil || res.Wrong != 200 || res.Missing != 2 || res.FirstWrong == "" {
		t.Errorf("verify after tampering: %+v, %v (want 200 wrong, 2 missing)", res, err)
	}
}
