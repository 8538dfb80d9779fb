package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"redline/internal/bench"
	"redline/internal/benchdata"
	"redline/internal/redisserver"
	"redline/internal/redistest"
	"redline/internal/resp"
	"redline/internal/testutil"
	"redline/internal/testutil/respscript"
)

func port(s *redisserver.Server) string { return strconv.Itoa(s.Port) }

// commandCalls returns INFO commandstats as command -> calls.
func commandCalls(t *testing.T, s *redisserver.Server) map[string]int {
	t.Helper()
	c := redistest.Client(t, s)
	v := redistest.Do(t, c, "INFO", "commandstats")
	calls := map[string]int{}
	re := regexp.MustCompile(`cmdstat_([a-z|]+):calls=(\d+)`)
	for _, m := range re.FindAllStringSubmatch(v.Str, -1) {
		calls[m[1]], _ = strconv.Atoi(m[2])
	}
	return calls
}

// TestBenchSuiteCommandCounts is redis-benchmark's own integration test
// (tests/integration/redis-benchmark.tcl): -c 10 -n 100 over the default
// suite must reach the server as exactly these calls.
func TestBenchSuiteCommandCounts(t *testing.T) {
	s := redistest.Start(t)
	redistest.Do(t, redistest.Client(t, s), "CONFIG", "RESETSTAT")
	out, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-c", "10", "-n", "100", "-q", "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	want := map[string]int{"ping": 200, "set": 100, "get": 100, "incr": 100, "lpush": 200, "rpush": 100,
		"lpop": 100, "rpop": 100, "sadd": 100, "hset": 100, "spop": 100, "zadd": 100, "zpopmin": 100,
		"lrange": 400, "mset": 100, "xadd": 100}
	got := commandCalls(t, s)
	delete(got, "info")
	delete(got, "config|get")
	delete(got, "config")
	delete(got, "config|resetstat")
	for cmd, n := range want {
		if got[cmd] != n {
			t.Errorf("%s: %d calls, want %d", cmd, got[cmd], n)
		}
	}
	for cmd := range got {
		if _, ok := want[cmd]; !ok {
			t.Errorf("unexpected command %s (%d calls)", cmd, got[cmd])
		}
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 21 {
		t.Errorf("want 21 -q lines, got %d:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if !regexp.MustCompile(`^[A-Z_ ()0-9a-z]+: \d+\.\d\d requests per second, p50=\d+\.\d{3} msec$`).MatchString(l) {
			t.Errorf("bad -q line %q", l)
		}
	}
}

func TestBenchExactRequestsWithPipeline(t *testing.T) {
	s := redistest.Start(t)
	out, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-t", "set", "-n", "10", "-P", "3", "-c", "1", "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := commandCalls(t, s)["set"]; got != 10 {
		t.Errorf("server saw %d SETs for -n 10 -P 3, want exactly 10 (redis-benchmark sends 12)", got)
	}
	if !strings.Contains(out, "  10 requests completed in ") {
		t.Errorf("report does not say 10 requests:\n%s", out)
	}
}

func TestBenchRandomKeysAndPayload(t *testing.T) {
	s := redistest.Start(t)
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-t", "set", "-n", "500", "-r", "100", "-d", "10", "-q", "--progress", "none")
	if code != 0 {
		t.Fatal(errOut)
	}
	c := redistest.Client(t, s)
	keys := elemStrings(redistest.Do(t, c, "KEYS", "*"))
	if len(keys) == 0 || len(keys) > 100 {
		t.Fatalf("%d keys, want 1..100", len(keys))
	}
	re := regexp.MustCompile(`^key:0000000000\d\d$`)
	for _, k := range keys {
		if !re.MatchString(k) {
			t.Errorf("key %q is not key: plus 12 digits below 100", k)
		}
	}
	if v := redistest.Do(t, c, "GET", keys[0]); v.Str != "VXKeHogKgJ" {
		t.Errorf("value %q, want redis-benchmark's payload VXKeHogKgJ", v.Str)
	}
	// Without -r the placeholder is sent literally, as redis-benchmark does.
	runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-t", "set", "-n", "5", "-q", "--progress", "none")
	if v := redistest.Do(t, c, "EXISTS", "key:__rand_int__"); v.Str != "1" {
		t.Errorf("literal key:__rand_int__ missing without -r")
	}
}

func TestBenchCustomCommandAndStdin(t *testing.T) {
	s := redistest.Start(t)
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-n", "300", "-r", "1000", "-q", "--progress", "none", "lpush", "mylist", "__rand_int__")
	if code != 0 {
		t.Fatal(errOut)
	}
	c := redistest.Client(t, s)
	members := elemStrings(redistest.Do(t, c, "LRANGE", "mylist", "0", "-1"))
	if len(members) != 300 || !regexp.MustCompile(`^\d{12}$`).MatchString(members[0]) {
		t.Fatalf("list has %d members like %q, want 300 12-digit numbers", len(members), members[0])
	}
	binary := "bin\x00ary\r\nvalue"
	out, errOut, code := runCLI(t, context.Background(), strings.NewReader(binary), "bench", "-p", port(s), "-n", "1", "-c", "1", "-x", "--csv", "set", "stdinkey")
	if code != 0 {
		t.Fatal(errOut)
	}
	if v := redistest.Do(t, c, "GET", "stdinkey"); v.Str != binary {
		t.Errorf("-x value %q, want %q (binary-safe)", v.Str, binary)
	}
	if !strings.Contains(out, "\"set stdinkey\",") {
		t.Errorf("CSV title should leave out the -x argument:\n%s", out)
	}
}

func TestBenchCSVEscapesQuotes(t *testing.T) {
	s := redistest.Start(t)
	out, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-n", "20", "--csv", "eval", `return redis.call("ping")`, "0")
	if code != 0 {
		t.Fatal(errOut)
	}
	if !strings.HasPrefix(out, bench.CSVHeader) {
		t.Fatalf("no CSV header:\n%s", out)
	}
	row := strings.TrimPrefix(out, bench.CSVHeader)
	if !strings.HasPrefix(row, `"eval return redis.call(""ping"") 0","`) {
		t.Errorf("title not escaped: %s", row)
	}
	if n := strings.Count(row, "\n"); n != 1 {
		t.Errorf("want one row, got %d:\n%s", n, row)
	}
}

func TestBenchRatioMix(t *testing.T) {
	s := redistest.Start(t)
	out, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "--ratio", "1:10", "-n", "1100", "-r", "1000", "--progress", "none")
	if code != 0 {
		t.Fatal(errOut)
	}
	calls := commandCalls(t, s)
	if calls["set"] != 100 || calls["get"] != 1000 {
		t.Errorf("SET %d GET %d, want 100 and 1000", calls["set"], calls["get"])
	}
	if !strings.Contains(out, "====== SET:GET 1:10 ======") || !strings.Contains(out, "  GET: ") {
		t.Errorf("report lacks the mix title or per-command lines:\n%s", out)
	}
}

func TestBenchDBSelectAndUnixSocket(t *testing.T) {
	s := redistest.StartWith(t, redisserver.Options{Unix: true})
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-s", s.Socket, "--dbnum", "3", "-t", "set", "-n", "50", "-q", "--progress", "none")
	if code != 0 {
		t.Fatal(errOut)
	}
	c := redistest.Client(t, s)
	info := redistest.Do(t, c, "INFO", "keyspace").Str
	if !strings.Contains(info, "db3:keys=1") || strings.Contains(info, "db0:") {
		t.Errorf("keys not in db3:\n%s", info)
	}
}

func TestBenchRESP3WithTracking(t *testing.T) {
	s := redistest.Start(t)
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-3", "--enable-tracking", "--ratio", "1:1", "-r", "5", "-n", "800", "-c", "4", "-q", "--progress", "none")
	if code != 0 {
		t.Fatal(errOut)
	}
	calls := commandCalls(t, s)
	// GETs make each connection track keys that other connections' SETs
	// then change: invalidation pushes interleave with the replies and must
	// not be counted as replies.
	if calls["get"] != 400 || calls["set"] != 400 || calls["hello"] != 4 || calls["client|tracking"] != 4 {
		t.Errorf("calls %v", calls)
	}
}

func TestBenchNoKeepAliveReconnects(t *testing.T) {
	s := redistest.Start(t)
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-k", "0", "-t", "ping_mbulk", "-n", "200", "-P", "4", "-c", "5", "-q", "--progress", "none")
	if code != 0 {
		t.Fatal(errOut)
	}
	c := redistest.Client(t, s)
	info := redistest.Do(t, c, "INFO", "stats").Str
	m := regexp.MustCompile(`total_connections_received:(\d+)`).FindStringSubmatch(info)
	n, _ := strconv.Atoi(m[1])
	// 50 batches of 4, each on a fresh connection, plus the 5 first ones
	// and the control connections.
	if n < 50 {
		t.Errorf("%d connections for 50 batches with -k 0", n)
	}
	if !strings.Contains(errOut, "keepalive disabled") {
		t.Errorf("missing -k 0 warning: %s", errOut)
	}
}

func TestBenchDurationWarmupAndJSON(t *testing.T) {
	s := redistest.Start(t)
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "r.json")
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-t", "set", "--duration", "700ms", "--warmup", "300ms", "-c", "4", "-q", "--progress", "none", "--json", jsonPath, "--hdr-out", filepath.Join(dir, "h"))
	if code != 0 {
		t.Fatal(errOut)
	}
	doc, err := benchdata.ReadDocument(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	r := doc.Results[0]
	if r.ElapsedSeconds < 0.6 {
		t.Errorf("measured %.3fs of a 700ms run: the warm-up must not eat into it", r.ElapsedSeconds)
	}
	if r.Histogram == nil || r.Histogram.TotalCount() != r.Requests || r.Requests == 0 {
		t.Errorf("histogram count %v vs requests %d", r.Histogram, r.Requests)
	}
	if sets := commandCalls(t, s)["set"]; int64(sets) <= r.Requests {
		t.Errorf("server saw %d SETs, measured %d: warm-up requests should be sent but not counted", sets, r.Requests)
	}
	if r.Server.Version == "" || r.Server.Config["appendonly"] != "no" || len(r.CommandLine) < 3 || r.Client.CPUs == 0 {
		t.Errorf("provenance missing: server %+v, command line %v, client %+v", r.Server.Version, r.CommandLine, r.Client)
	}
	if _, err := os.Stat(filepath.Join(dir, "h-SET.hgrm")); err != nil {
		t.Errorf("hgrm file: %v", err)
	}
	raw, _ := os.ReadFile(jsonPath)
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil || generic["schema"] != benchdata.DocumentSchema {
		t.Errorf("schema field: %v %v", generic["schema"], err)
	}
}

func TestBenchBadInput(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-n", "0"}, "nothing to do"},
		{[]string{"-c", "0"}, "clients must be at least 1"},
		{[]string{"-c", "abc"}, "invalid argument"},
		{[]string{"-P", "0"}, "pipeline must be at least 1"},
		{[]string{"-t", "nosuch"}, `unknown test "nosuch"`},
		{[]string{"-p", "70000"}, "invalid server port"},
		{[]string{"-d", "0"}, "-d must be"},
		{[]string{"--ratio", "x"}, "bad --ratio"},
		{[]string{"--key-dist", "pareto", "-r", "10"}, "unknown key distribution"},
		{[]string{"--data-size-range", "9-3"}, "bad value size range"},
		{[]string{"--cluster", "-k", "0"}, "not supported yet"},
		{[]string{"--cluster", "--connect-rate", "100"}, "--cluster with --connect-rate is not supported yet"},
		{[]string{"--rate", "inf"}, "beyond what can be paced"},
		{[]string{"--connect-rate", "2e9"}, "beyond what can be paced"},
		{[]string{"--cluster", "--dbnum", "2"}, "only database 0"},
		{[]string{"--key-index", "2"}, "need --cluster"},
		{[]string{"--workers", "-1"}, "--workers must not be negative"},
		{[]string{"--workers", "65", "-c", "100"}, "--workers 65: at most 64"},
		{[]string{"-u", "http://x"}, "invalid URI"},
		{[]string{"--nosuchflag"}, "unknown flag"},
		{[]string{"--progress", "nope"}, "--progress"},
	}
	for _, c := range cases {
		_, errOut, code := runCLI(t, context.Background(), nil, append([]string{"bench", "-p", "1"}, c.args...)...)
		if code != ExitError || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 mentioning %q", c.args, code, errOut, c.want)
		}
	}
}

func TestBenchHelpKeepsDashHForHost(t *testing.T) {
	out, _, code := runCLI(t, context.Background(), nil, "bench", "--help")
	if code != 0 || !strings.Contains(out, "-h, --host") || !strings.Contains(out, "--rate") {
		t.Fatalf("help: exit %d\n%s", code, out)
	}
}

func TestBenchConnectionRefused(t *testing.T) {
	p, _ := redisserver.FreePort("127.0.0.1")
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", strconv.Itoa(p), "-n", "10")
	want := fmt.Sprintf("Could not connect to Redis at 127.0.0.1:%d: Connection refused", p)
	if code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, errOut, want)
	}
}

func TestBenchAuth(t *testing.T) {
	s := redistest.Start(t, "requirepass sekret")
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-n", "10", "-t", "set")
	if code != 1 || !strings.Contains(errOut, "NOAUTH") {
		t.Errorf("no password: exit %d, %q", code, errOut)
	}
	_, errOut, code = runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-a", "wrong", "-n", "10", "-t", "set")
	if code != 1 || !strings.Contains(errOut, "WRONGPASS") {
		t.Errorf("wrong password: exit %d, %q", code, errOut)
	}
	_, errOut, code = runCLI(t, context.Background(), nil, "bench", "-u", "redis://sekret@127.0.0.1:"+port(s)+"/2", "-n", "10", "-t", "set", "-q", "--progress", "none")
	if code != 0 {
		t.Errorf("URI with password: exit %d, %q", code, errOut)
	}
}

func TestBenchServerErrorNamesCommand(t *testing.T) {
	s := redistest.Start(t)
	c := redistest.Client(t, s)
	redistest.Do(t, c, "SET", "mylist", "not a list")
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-t", "lpush", "-n", "100", "--progress", "none")
	if code != 1 || !strings.Contains(errOut, "Error from server: WRONGTYPE") || !strings.Contains(errOut, "LPUSH mylist") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestBenchServerClosesConnectionMidRun(t *testing.T) {
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("SET", 500, respscript.Close())})
	jsonPath := filepath.Join(t.TempDir(), "partial.json")
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", strconv.Itoa(s.Port()), "-t", "set", "--duration", "1h", "-c", "4", "--json", jsonPath, "--progress", "none")
	if code != 1 || !strings.Contains(errOut, "Server closed the connection") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	doc, err := benchdata.ReadDocument(jsonPath)
	if err != nil || len(doc.Results) != 1 || doc.Results[0].Requests == 0 || doc.Results[0].Error == "" {
		t.Fatalf("partial results not kept: %v %+v", err, doc)
	}
}

func TestBenchServerStopsAnswering(t *testing.T) {
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("SET", 500, respscript.Stall())})
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", strconv.Itoa(s.Port()), "-t", "set", "--duration", "1h", "-c", "2", "--timeout", "300ms", "--progress", "none")
	if code != 1 || !strings.Contains(errOut, "stopped answering") || !strings.Contains(errOut, "--timeout") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestBenchInterruptPrintsPartialSummary(t *testing.T) {
	s := respscript.Start(t, respscript.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.Seen("SET", 1000)
		cancel()
	}()
	out, errOut, code := runCLI(t, ctx, nil, "bench", "-p", strconv.Itoa(s.Port()), "-t", "set", "--duration", "1h", "-c", "4", "--progress", "none")
	if code != ExitSignaled || !strings.Contains(out, "====== SET ======") || !strings.Contains(out, "interrupted: partial results") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}

// TestBenchRateModeCorrectsCoordinatedOmission: the CLI reports both
// latencies of a rate run (the bench package checks what they measure).
func TestBenchRateModeCorrectsCoordinatedOmission(t *testing.T) {
	s := respscript.Start(t, respscript.Options{Script: respscript.OnNth("GET", 200, respscript.Delay(300*time.Millisecond))})
	jsonPath := filepath.Join(t.TempDir(), "rate.json")
	_, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", strconv.Itoa(s.Port()), "-t", "get", "--rate", "2000", "-n", "1000", "-c", "1", "--max-pending", "1", "-q", "--progress", "none", "--json", jsonPath)
	if code != 0 {
		t.Fatal(errOut)
	}
	doc, err := benchdata.ReadDocument(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	r := doc.Results[0]
	if r.Requests != 1000 || r.Config.Rate != 2000 {
		t.Errorf("%d requests at rate %v; want 1000 at 2000", r.Requests, r.Config.Rate)
	}
	if r.Uncorrected == nil || r.UncorrectedHistogram == nil {
		t.Fatal("no uncorrected latency in rate mode")
	}
	if r.Uncorrected.P99 > r.Latency.P99/2 {
		t.Errorf("corrected p99 %.3f ms, uncorrected p99 %.3f ms: want the held-back reply visible only in the corrected figure", r.Latency.P99, r.Uncorrected.P99)
	}
}

func TestBenchIdleMode(t *testing.T) {
	s := redistest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		_, _, code := runCLI(t, ctx, nil, "bench", "-p", port(s), "-I", "-c", "7")
		done <- code
	}()
	c := redistest.Client(t, s)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(redistest.Do(t, c, "INFO", "clients").Str, "connected_clients:8\r") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	info := redistest.Do(t, c, "INFO", "clients").Str
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("idle mode exit %d", code)
	}
	if !strings.Contains(info, "connected_clients:8\r") {
		t.Errorf("want 7 idle + 1 control connection:\n%s", info)
	}
}

// TestBenchOutputShapeMatchesRedisBenchmark runs the installed
// redis-benchmark and redline with the same command lines against one real
// server and compares their stdout line by line, numbers aside: the
// default report, -q and --csv. redline's connection notes are on stderr.
func TestBenchOutputShapeMatchesRedisBenchmark(t *testing.T) {
	rb := testutil.NeedPath(t, "redis-benchmark")
	s := redistest.Start(t)
	for _, mode := range [][]string{nil, {"-q"}, {"--csv"}, {"-q", "--threads", "2"}, {"--threads", "2"}} {
		args := append([]string{"-p", port(s), "-t", "set,get,lrange_100", "-n", "2000", "-c", "4"}, mode...)
		want, err := exec.Command(rb, args...).Output()
		if err != nil {
			t.Fatalf("redis-benchmark %v: %v", args, err)
		}
		out, errOut, code := runCLI(t, context.Background(), nil, append([]string{"bench"}, args...)...)
		if code != 0 {
			t.Fatalf("redline bench %v: exit %d\n%s", args, code, errOut)
		}
		if d := cmp.Diff(testutil.LineShapes(string(want)), testutil.LineShapes(out)); d != "" {
			t.Errorf("%v: stdout's shape (-redis-benchmark +redline):\n%s", mode, d)
		}
	}
}

// TestBenchIdleAtMaxclients is redis-benchmark's own test ("clients idle
// mode should return error when reached maxclients limit"): -c 10 -I
// against maxclients 5 fails with the server's error, exit 1, at once.
// redline used to hold the refused connections and wait forever.
func TestBenchIdleAtMaxclients(t *testing.T) {
	s := redistest.Start(t)
	redistest.Do(t, redistest.Client(t, s), "CONFIG", "SET", "maxclients", "5")
	out, errOut, code := runCLI(t, context.Background(), nil, "bench", "-p", port(s), "-c", "10", "-I")
	if code != 1 || !strings.Contains(errOut, "Error from server: ERR max number of clients reached") {
		t.Errorf("exit %d, stderr %q; want 1 and redis-benchmark's error", code, errOut)
	}
	if !strings.HasPrefix(out, "Creating 10 idle connections and waiting forever (Ctrl+C when done)\n") {
		t.Errorf("stdout %q", out)
	}
}

// elemStrings is an aggregate reply's elements as strings.
func elemStrings(v resp.Value) []string {
	out := make([]string, len(v.Elems))
	for i, e := range v.Elems {
		out[i] = e.Str
	}
	return out
}
