package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"redline/internal/autotune"
	"redline/internal/labdata"
	"redline/internal/stats"
	"redline/internal/target"
	"redline/internal/testutil"
	"redline/internal/tune"
)

// The Debian source builds internal/redisbuild's heavy tests and the lab's
// build tests make (gcc -O2, and -O3): the build cache holds them, so
// these tests build nothing.
const (
	buildO2 = "o2=--source debian"
	buildO3 = "o3=--source debian -O -O3"
)

// TestAutotuneBuildRefusals: a hostile or malformed --build is refused in
// one line, exit 2, before anything is built, started or measured (the
// session's directory is not even made): a flag with a shell in it, a
// source tree or a compiler named by path without --trust-build, a SPEC
// that is not redline build's flags, a name given twice. A journal is a
// file too: a resumed session's tree spec needs --trust-build as well.
func TestAutotuneBuildRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--build", "x=--source debian --cflag=-O2;id"}, "not a compiler flag"},
		{[]string{"--build", "x=--source /tmp/redis-src"}, "--trust-build"},
		{[]string{"--build", "x=--source debian --cc /tmp/cc"}, "--trust-build"},
		{[]string{"--build", "x=--source debian --cflag=-fplugin=/tmp/p.so"}, "loads code into the compiler"},
		{[]string{"--build", "x=--source debian --nope"}, "unknown flag"},
		{[]string{"--build", "--source debian"}, "NAME=SPEC"},
		{[]string{"--build", "x=--source debian stray"}, `unexpected "stray"`},
		{[]string{"--build", "x=", "--trust-build"}, "source is required"},
		{[]string{"--build", buildO2, "--build", "o2=--source debian -O -O3"}, "given twice"},
		{[]string{"--build", buildO2, "--knob", "redis.hz"}, "leaves server.build out"},
	} {
		dir := filepath.Join(t.TempDir(), "at")
		_, stderr, code := runCLI(t, context.Background(), nil, append([]string{"autotune", "--dir", dir}, c.args...)...)
		if code != ExitError || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("autotune %q: exit %d, stderr %q; want exit 2 and %q in one line", c.args, code, stderr, c.want)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("autotune %q: the session's directory was made before the refusal", c.args)
		}
	}

	dir := t.TempDir()
	target, _ := json.Marshal(target.Spec{Workload: defaultAutotuneWorkload, Objective: "throughput",
		Builds: []target.Build{{Name: "tree", Spec: labdata.BuildSpec{Source: "/tmp/redis-src"}}}})
	start, _ := json.Marshal(map[string]any{"event": "start", "options": autotune.Options{Seed: 1, Target: target,
		Candidates: []autotune.Candidate{{Knob: "server.build", Values: []string{"tree"}}}}})
	if err := os.WriteFile(filepath.Join(dir, autotune.JournalFile), append(start, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, context.Background(), nil, "autotune", "--resume", dir)
	if code != ExitError || !strings.Contains(stderr, "--build tree") || !strings.Contains(stderr, "--trust-build") {
		t.Errorf("resume of a journal with a tree spec: exit %d, %q", code, stderr)
	}
	_, stderr, code = runCLI(t, context.Background(), nil, "autotune", "--resume", dir, "--build", buildO2)
	if code != ExitError || !strings.Contains(stderr, "--build with --resume") {
		t.Errorf("--build with --resume: exit %d, %q", code, stderr)
	}
}

// TestAutotuneBuildCandidates: server.build's values are the session's
// build names; without --build it is untested, saying why.
func TestAutotuneBuildCandidates(t *testing.T) {
	cands, untested := target.Candidates(target.Spec{Knobs: []string{"server.build"}})
	if len(cands) != 0 || len(untested) != 1 || !strings.Contains(untested[0], "no --build NAME=SPEC given") {
		t.Errorf("no --build: %v, %q", cands, untested)
	}
	b2, _ := parseAutotuneBuild(buildO2)
	b3, err := parseAutotuneBuild(buildO3)
	if err != nil || b3.Spec.Source != "debian" || b3.Spec.Opt != "-O3" {
		t.Fatalf("%s: %+v, %v", buildO3, b3, err)
	}
	cands, _ = target.Candidates(target.Spec{Knobs: []string{"server.build"}, Builds: []target.Build{b2, b3}})
	if len(cands) != 1 || strings.Join(cands[0].Values, ",") != "o2,o3" {
		t.Errorf("candidates %+v", cands)
	}
	pgo, err := parseAutotuneBuild(`pgo=--source debian --cc clang -O -O3 --lto thin --pgo --pgo-workload "-t set -c 8"`)
	if err != nil || pgo.Spec.PGO == nil || pgo.Spec.PGO.Workload != "-t set -c 8" || pgo.Spec.LTO != "thin" {
		t.Errorf("a quoted PGO workload: %+v, %v", pgo.Spec, err)
	}
}

// TestAutotuneServerBuildSession: a session whose one knob is
// server.build (Debian's source at -O2 and at -O3, from the cache) runs
// to its decisions, restores, and records each binary's provenance in
// result.json, report.md and the journal; --resume finds the same
// binaries, and a journaled build whose cache key no longer matches is
// refused before any measurement.
func TestAutotuneServerBuildSession(t *testing.T) {
	t.Parallel() // waits on its own servers (or builds)
	testutil.NeedRoot(t)
	testutil.NeedTools(t, "apt-get", "dpkg-source", "make", "/usr/lib/x86_64-linux-gnu/libjemalloc.so", "gcc")
	dir := filepath.Join(t.TempDir(), "at")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute) // a cold cache compiles Redis twice
	defer cancel()
	out, stderr, code := runCLI(t, ctx, nil, "autotune", "--dir", dir, "--seed", "1", "--knob", "server.build",
		"--build", buildO2, "--build", buildO3, "--workload", "-t set -c 4 -P 4 --duration 300ms --warmup 50ms", "--max-rounds", "8")
	if code != ExitOK && code != ExitFailure || strings.Contains(out, "stopped:") {
		t.Fatalf("autotune: exit %d (want a session run to its end): %s%s", code, out, stderr)
	}
	for _, want := range []string{"build o2: ", "build o3: ", "builds: 2 took", "server.build = o3"} {
		if !strings.Contains(out, want) {
			t.Errorf("the answer lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Trials []autotune.Trial `json:"trials"`
		Builds []target.Build   `json:"builds"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Builds) != 2 || len(res.Trials) == 0 {
		t.Fatalf("result.json: %d builds, %d trials", len(res.Builds), len(res.Trials))
	}
	for _, x := range res.Builds {
		if p := x.Built; p == nil || p.CompilerVersion == "" || p.SourceSHA256 == "" || !strings.HasPrefix(p.Binary, "/var/cache/redline/build/") {
			t.Errorf("build %s: provenance %+v", x.Name, p)
		}
	}
	report, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(report), "## Builds") || !strings.Contains(string(report), "OPTIMIZATION=-O3") {
		t.Errorf("report.md has no builds' provenance:\n%s", report)
	}
	noPending(t, filepath.Join(dir, "tune"))

	out, stderr, code = runCLI(t, ctx, nil, "autotune", "--resume", dir)
	if code != ExitOK && code != ExitFailure || !strings.Contains(out, "build o3: cached: "+res.Builds[1].Built.Binary) {
		t.Errorf("--resume: exit %d, the same binaries not found:\n%s%s", code, out, stderr)
	}
	journal := filepath.Join(dir, autotune.JournalFile)
	j, _ := os.ReadFile(journal)
	key := res.Builds[1].Built.Key
	if err := os.WriteFile(journal, bytes.Replace(j, []byte(key), []byte(strings.Repeat("0", len(key))), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = runCLI(t, ctx, nil, "autotune", "--resume", dir)
	if code != ExitError || !strings.Contains(stderr, "makes another binary than the session measured") || strings.Contains(out, "noise:") {
		t.Errorf("--resume with another binary: exit %d: %s%s", code, out, stderr)
	}
}

// TestAutotuneBuildPlanNotes: a confirmed plan that keeps a build says in
// plan.yaml's notes which binary to start and what it is, and result.json
// and report.md carry the build's provenance.
func TestAutotuneBuildPlanNotes(t *testing.T) {
	set := autotune.Setting{Knob: "server.build", Value: "o3"}
	final := autotune.Config{set}
	kept := stats.Comparison{N: 12, Ratio: 1.1, CILow: 1.05, CIHigh: 1.2, HasCI: true, Level: 0.01, Outcome: stats.Better, Paired: true}
	res := &autotune.Result{
		Trials:       []autotune.Trial{{N: 1, Phase: autotune.PhaseScreen, Setting: set, Config: final, Rounds: 12, Result: kept, Decision: autotune.Kept, Incumbent: final}},
		Final:        final,
		Confirmation: &autotune.Confirmation{Config: final, Confirmed: true, Result: stats.Comparison{N: 24, Ratio: 1.08, CILow: 1.03, CIHigh: 1.13, HasCI: true, Level: 0.05, Outcome: stats.Better}},
		Measurements: 60,
	}
	b3, _ := parseAutotuneBuild(buildO3)
	b3.Built = &labdata.BuildProvenance{Binary: "/var/cache/redline/build/96d321a840198af1/redis-server", Key: "96d321a840198af1", SourceKind: "debian",
		Source: "redis_7.0.15.dsc", SourceSHA256: "6416560d9f6e692a", Compiler: "/usr/bin/gcc", CompilerVersion: "gcc (Debian 12.2.0-14) 12.2.0",
		Make: []string{"CC=/usr/bin/gcc", "OPTIMIZATION=-O3"}, Allocator: "jemalloc"}
	o := &autotuneOptions{dir: t.TempDir(), target: target.Spec{Workload: defaultAutotuneWorkload, Objective: "throughput", Builds: []target.Build{b3}}}
	var out strings.Builder
	if err := autotuneFinish(&streams{out: &out, err: &out}, o, &target.Outcome{Spec: o.target, Result: res, Addr: "127.0.0.1:6379"}, nil); err != nil {
		t.Fatal(err)
	}
	plan, _ := os.ReadFile(filepath.Join(o.dir, "plan.yaml"))
	for _, want := range []string{"the binary built as o3", "start /var/cache/redline/build/96d321a840198af1/redis-server on the server host", "gcc -O3 from debian", "gcc (Debian 12.2.0-14) 12.2.0", "sha256 6416560d9f6e"} {
		if !strings.Contains(string(plan), want) {
			t.Errorf("plan.yaml lacks %q:\n%s", want, plan)
		}
	}
	if _, err := tune.ParsePlan(plan, ".yaml"); err != nil {
		t.Errorf("plan.yaml does not parse: %v", err)
	}
	report, _ := os.ReadFile(filepath.Join(o.dir, "report.md"))
	if !strings.Contains(string(report), "## Builds") || !strings.Contains(string(report), "OPTIMIZATION=-O3") {
		t.Errorf("report.md:\n%s", report)
	}
	var got struct {
		Final  autotune.Config `json:"final"`
		Builds []target.Build  `json:"builds"`
	}
	b, _ := os.ReadFile(filepath.Join(o.dir, "result.json"))
	if err := json.Unmarshal(b, &got); err != nil || len(got.Builds) != 1 || got.Builds[0].Built.CompilerVersion == "" || len(got.Final) != 1 {
		t.Errorf("result.json: %+v, %v", got, err)
	}
}

// TestAutotuneSSHBuild: over ssh, the server host's session builds the
// spec (in its cache: the same Debian -O2 build, so a cache hit) and the
// server.build trial starts that binary there, beside the baseline's;
// the server host is left as found.
func TestAutotuneSSHBuild(t *testing.T) {
	l := newSSHLab(t)
	testutil.NeedTools(t, "apt-get", "dpkg-source", "make", "/usr/lib/x86_64-linux-gnu/libjemalloc.so", "gcc")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute) // a cold cache compiles Redis
	defer cancel()
	fetchDebianSource(t, ctx)
	cmd := l.autotune(t, ctx, "--knob", "server.build", "--build", buildO2, "--workload", "-t set -c 2 --duration 300ms", "--max-rounds", "8")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != ExitFailure) || strings.Contains(out.String(), "stopped:") {
		t.Fatalf("autotune: %v (want a session run to its end)\n%s", err, out.String())
	}
	for _, want := range []string{"building 1 --build spec(s) on ", "build o2: cached: /var/cache/redline/build/", "server.build = o2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in the answer:\n%s", want, out.String())
		}
	}
	l.checkRestored(t)
	if l.serverRedis(t) {
		t.Error("a redis-server still runs on the server host")
	}
}
