package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/testutil"
)

// The write-up 003 lab's PGO build (examples/writeup-003-build.yaml names
// the same spec): the tests and the lab share one cached build.
const pgoWorkload = "-t ping,set,get -P 16 -d 1000 -c 50"

var pgoBuildArgs = []string{"build", "--source", "debian", "-j2", "--cc", "clang", "-O", "-O3", "--lto", "thin",
	"--pgo", "--pgo-workload", pgoWorkload, "--pgo-duration", "10s", "--json"}

// needBuildTools skips (fails in CI) without root (the build cache is
// /var/cache/redline/build and apt-get source runs as root) or the tools
// .ci/run installs.
func needBuildTools(t *testing.T, tools ...string) {
	t.Helper()
	testutil.NeedRoot(t)
	for _, tool := range append([]string{"apt-get", "dpkg-source", "make"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s missing (.ci/run installs it)", tool)
			}
			t.Skipf("%s missing", tool)
		}
	}
}

func buildJSON(t *testing.T, args ...string) labdata.BuildProvenance {
	t.Helper()
	out, errOut, code := runCLI(t, context.Background(), nil, args...)
	if code != 0 {
		t.Fatalf("redline %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	var p labdata.BuildProvenance
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return p
}

// TestBuildDebianGCC builds Debian's redis source package with gcc, then
// asks again: the second is the cached binary.
func TestBuildDebianGCC(t *testing.T) {
	needBuildTools(t, "gcc")
	first := buildJSON(t, "build", "--source", "debian", "-j2", "--json")
	if first.SourceKind != "debian" || !strings.Contains(first.CompilerVersion, "gcc") || first.SourceSHA256 == "" || first.Allocator != "jemalloc" {
		t.Errorf("provenance: %+v", first)
	}
	out, err := exec.Command(first.Binary, "--version").Output()
	if err != nil || !strings.Contains(string(out), "Redis server v=") {
		t.Fatalf("%s --version: %v %s", first.Binary, err, out)
	}
	again := buildJSON(t, "build", "--source", "debian", "-j2", "--json")
	if !again.Cached || again.Binary != first.Binary || again.Key != first.Key {
		t.Errorf("second build not the cached one: %+v", again)
	}
}

// TestBuildPGORoundTrip builds with clang's PGO: the training run left a
// profile with counts, and the optimised build used it without one
// missing-profile warning (-Wprofile-instr-missing is on).
func TestBuildPGORoundTrip(t *testing.T) {
	needBuildTools(t, "clang", "ld.lld", "llvm-profdata")
	p := buildJSON(t, pgoBuildArgs...)
	tr := p.Training
	if tr == nil || tr.Workload != pgoWorkload || tr.Functions == 0 || tr.MissingWarnings != 0 || !strings.HasSuffix(tr.Profile, ".profdata") {
		t.Fatalf("training: %+v", tr)
	}
	var optimised string
	for _, s := range p.Steps {
		if s.Name == "optimised-build" {
			optimised = s.Log
		}
	}
	log, err := os.ReadFile(optimised)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "-fprofile-use="+tr.Profile) || !strings.Contains(string(log), "-flto=thin") {
		t.Errorf("the optimised build's log (%s) does not compile with the profile and thin LTO", optimised)
	}
}

// TestLabBuiltBinaries runs a lab comparing two binaries redline build made
// (the gcc and clang PGO builds above, from the cache) end to end, and
// checks each variant's provenance in result.json and the report.
func TestLabBuiltBinaries(t *testing.T) {
	needBuildTools(t, "gcc", "clang", "ld.lld", "llvm-profdata")
	dir := t.TempDir()
	scenario := `name: built-binaries
target: {kind: managed}
doctor: false
workloads:
  - name: set
    bench: -t set -c 10 -r 1000 --duration 1s
variants:
  - name: gcc-o2
    baseline: true
    server: {build: {source: debian}}
  - name: clang-pgo
    server:
      build:
        source: debian
        cc: clang
        opt: -O3
        lto: thin
        pgo: {workload: "` + pgoWorkload + `", duration: 10s}
repetitions: 1
warmup: 200ms
`
	file := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(file, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, errOut, code := runCLI(t, context.Background(), nil, "lab", file, "-o", out, "--progress", "none")
	if code != 0 {
		t.Fatalf("lab: exit %d\n%s", code, errOut)
	}
	res, err := labdata.ReadResult(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range res.Variants {
		if v.Build == nil || v.Build.Binary == "" || v.Build.CompilerVersion == "" {
			t.Errorf("variant %s: no build provenance: %+v", v.Name, v.Build)
		}
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Variant gcc-o2 ran a redis-server built by redline build", "clang version", "pgo: trained 10s"} {
		if !strings.Contains(string(report), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
