package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/redistest"
)

const cliWorkload = `version: 1
name: tiny
keyspaces:
  h: {prefix: "h:", count: 50}
  s: {prefix: "s:", count: 50, width: 4}
preload:
  - {keys: h, type: hash, elements: {fixed: 4}, value: {fixed: 10}}
run:
  clients: 4
  ops:
    - {name: read, weight: 3, command: [HGETALL, "{key}"], keys: h}
    - {name: write, weight: 1, command: [SET, "{key}", "{value}"], keys: s, value: {fixed: 8}, ttl: {share: 1, min: 1h, max: 1h}}
    - name: tx
      weight: 1
      multi: [{command: [INCR, "c:{key}"], keys: s}]
`

// TestBenchWorkloadFile runs bench on a workload file: the preload writes
// every key, the mix's commands reach the server in their weights' order
// of magnitude, the file's clients apply and -c overrides them.
func TestBenchWorkloadFile(t *testing.T) {
	s := redistest.Start(t)
	path := filepath.Join(t.TempDir(), "w.yaml")
	os.WriteFile(path, []byte(cliWorkload), 0o644)
	out, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "--workload-file", path, "-n", "1000", "-q", "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, "tiny: ") {
		t.Errorf("quiet line: %q", out)
	}
	calls := commandCalls(t, s)
	if calls["hset"] != 50 || calls["hgetall"] < 400 || calls["set"] < 100 || calls["exec"] < 100 || calls["exec"] != calls["incr"] {
		t.Errorf("server calls %v: want 50 HSETs from the preload, then about 600 HGETALL, 200 SET, 200 MULTI/INCR/EXEC", calls)
	}
	c := redistest.Client(t, s)
	if ttl := redistest.Do(t, c, "TTL", "s:0000").Str; ttl != "-2" && ttl <= "0" {
		t.Errorf("SET with ttl share 1 left s:0000 with TTL %s", ttl)
	}
	_, errOut, code = runCLI(t, context.Background(), nil, "bench", "-p", port(s), "--workload-file", path, "-t", "get")
	if code != ExitError || !strings.Contains(errOut, "--workload-file replaces") {
		t.Errorf("--workload-file with -t: exit %d, %s", code, errOut)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte(strings.Replace(cliWorkload, "keys: h}", "keys: nope}", 1)), 0o644)
	_, errOut, code = runCLI(t, context.Background(), nil, "bench", "-p", port(s), "--workload-file", bad)
	if code != ExitError || !strings.Contains(errOut, `line 11: run.ops.0.keys: no keyspace "nope"`) {
		t.Errorf("bad file: exit %d, %s", code, errOut)
	}
}

// TestWorkloadCaptureThenCompare captures a small server with the CLI,
// checks that no key name leaves it, and compares the replay.
func TestWorkloadCaptureThenCompare(t *testing.T) {
	s := redistest.Start(t)
	c := redistest.Client(t, s)
	for i := range 200 {
		redistest.Do(t, c, "SET", "secretname:"+strings.Repeat("x", i%7)+":"+string(rune('a'+i%26))+strings.Repeat("1", 1+i%5), strings.Repeat("v", 20+i%50))
	}
	out := filepath.Join(t.TempDir(), "cap.yaml")
	_, errOut, code := runCLI(t, context.Background(), nil, "workload", "capture", "--addr", s.Addr(), "--duration", "1s", "-o", out)
	if code != 0 {
		t.Fatalf("capture: exit %d: %s", code, errOut)
	}
	b, _ := os.ReadFile(out)
	if strings.Contains(string(b), "secretname") || strings.Contains(string(b), "vvvv") {
		t.Errorf("a key name or value left the server:\n%s", b)
	}
	stdout, errOut, code := runCLI(t, context.Background(), nil, "workload", "compare", "-f", out, "--duration", "1s")
	// 200 keys are too few for used_memory to compare (the server's own
	// megabyte dominates): exit 1 for that is fine here.
	if code > 1 || !strings.Contains(stdout, "used_memory") || !strings.Contains(stdout, "string element bytes p50") || strings.Contains(stdout, "share ping") {
		t.Errorf("compare: exit %d\n%s\n%s", code, stdout, errOut)
	}
}
