package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/testutil"
)

// The write-up 003 lab's PGO build (examples/writeup-003-build.yaml and
// internal/redisbuild's tests name the same spec): one cached build.
const pgoWorkload = "-t ping,set,get -P 16 -d 1000 -c 50"

// TestBuildBadFlag: a flag that is not a compiler flag is a usage error.
func TestBuildBadFlag(t *testing.T) {
	_, errOut, code := runCLI(t, context.Background(), nil, "build", "--source", "debian", "--cflag=-O2;id")
	if code != ExitError || !strings.Contains(errOut, "not a compiler flag") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("exit %d: %q", code, errOut)
	}
}

// TestBuildSSHCache: --cache names this machine's cache; with --ssh the
// server host builds in its own, so the two together are a usage error,
// said before any ssh.
func TestBuildSSHCache(t *testing.T) {
	_, errOut, code := runCLI(t, context.Background(), nil, "build", "--source", "debian", "--ssh", "nosuchhost.invalid", "--cache", t.TempDir())
	if code != ExitError || !strings.Contains(errOut, "--cache is this machine's") {
		t.Errorf("exit %d: %q", code, errOut)
	}
}

// TestBuildGCCThinLTO: a setting this compiler lacks is a usage error too,
// found before anything is fetched or built.
func TestBuildGCCThinLTO(t *testing.T) {
	testutil.NeedTools(t, "gcc")
	_, errOut, code := runCLI(t, context.Background(), nil, "build", "--source", t.TempDir(), "--lto", "thin", "--cache", t.TempDir())
	if code != ExitError || !strings.Contains(errOut, "no thin LTO") {
		t.Errorf("exit %d: %q", code, errOut)
	}
	_, errOut, code = runCLI(t, context.Background(), nil, "build", "--source", t.TempDir(), "--cache", t.TempDir())
	if code != ExitError || !strings.Contains(errOut, "is not a Redis source tree") {
		t.Errorf("exit %d: %q", code, errOut)
	}
}

// TestLabBuiltBinaries runs a lab comparing two binaries redline build made
// (internal/redisbuild's tests' gcc and clang PGO builds, from the cache) end to end, and
// checks each variant's provenance in result.json and the report.
func TestLabBuiltBinaries(t *testing.T) {
	t.Parallel()         // waits on its own servers (or builds)
	testutil.NeedRoot(t) // the build cache is /var/cache/redline/build
	testutil.NeedTools(t, "apt-get", "dpkg-source", "make", "/usr/lib/x86_64-linux-gnu/libjemalloc.so", "gcc", "clang", "ld.lld", "llvm-profdata",
		"/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.profile-x86_64.a") // clang PGO links its profile runtime
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
