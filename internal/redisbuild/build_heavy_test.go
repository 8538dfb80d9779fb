package redisbuild

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"redline/internal/buildspec"
	"redline/internal/testutil"
)

// The CI's two builds, shared through the cache (/var/cache/redline/build)
// with the lab test in internal/cli and with write-up 003's lab
// (examples/writeup-003-build.yaml names the same specs).
var (
	gccSpec = buildspec.Spec{Source: DebianSource}
	pgoSpec = buildspec.Spec{Source: DebianSource, CC: "clang", Opt: "-O3", LTO: "thin",
		PGO: &buildspec.PGO{Workload: "-t ping,set,get -P 16 -d 1000 -c 50", Duration: "10s"}}
	// gcc's PGO at gcc's default level, so its binary compares with
	// gccSpec's: the profile is the only difference.
	gccPGOSpec = buildspec.Spec{Source: DebianSource,
		PGO: &buildspec.PGO{Workload: "-t ping,set,get -P 16 -d 1000 -c 50", Duration: "10s"}}
	// BOLT after gcc's PGO, trained the same way.
	boltSpec = buildspec.Spec{Source: DebianSource,
		PGO: &buildspec.PGO{Workload: "-t ping,set,get -P 16 -d 1000 -c 50", Duration: "10s", BOLT: true}}
)

// needBuildTools: root (the cache is under /var/cache and apt-get source
// runs as root) and what make test-deps installs: Debian's source, signed
// by its keyring, links the system jemalloc.
func needBuildTools(t *testing.T, tools ...string) {
	t.Helper()
	testutil.NeedRoot(t)
	testutil.NeedTools(t, append([]string{"apt-get", "dpkg-source", "xz", "make", systemJemalloc, "/usr/share/keyrings/debian-archive-keyring.gpg"}, tools...)...)
}

func build(t *testing.T, spec buildspec.Spec) buildspec.Provenance {
	t.Helper()
	p, err := Build(context.Background(), spec, Options{Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBuildDebianGCC builds Debian's redis source package with gcc, then
// asks again: the second is the cached binary.
func TestBuildDebianGCC(t *testing.T) {
	needBuildTools(t, "gcc")
	first := build(t, gccSpec)
	if first.SourceKind != "debian" || !strings.Contains(first.CompilerVersion, "gcc") || first.SourceSHA256 == "" || first.Allocator != "jemalloc" {
		t.Errorf("provenance: %+v", first)
	}
	out, err := exec.Command(first.Binary, "--version").Output()
	if err != nil || !strings.Contains(string(out), "Redis server v=") {
		t.Fatalf("%s --version: %v %s", first.Binary, err, out)
	}
	st, err := os.Stat(first.Binary)
	if err != nil || st.Mode().Perm()&0o022 != 0 {
		t.Errorf("%s: writable by others: %v %v", first.Binary, st.Mode(), err)
	}
	again := build(t, gccSpec)
	if !again.Cached || again.Binary != first.Binary || again.Key != first.Key {
		t.Errorf("second build not the cached one: %+v", again)
	}
}

// TestBuildPGORoundTrip builds with clang's PGO: the training run left a
// profile with counts, and the optimised build compiled with it without one
// missing-profile warning (-Wprofile-instr-missing is on).
func TestBuildPGORoundTrip(t *testing.T) {
	needBuildTools(t, "clang", "ld.lld", "llvm-profdata", clangProfileRuntime)
	p := build(t, pgoSpec)
	tr := p.Training
	if tr == nil || tr.Workload != pgoSpec.PGO.Workload || tr.Functions == 0 || tr.MissingWarnings != 0 || !strings.HasSuffix(tr.Profile, ".profdata") {
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
	if _, err := os.Stat(tr.Profile); err != nil {
		t.Errorf("the profile is not kept with the binary: %v", err)
	}
	// The log names the profile where it was built (the directory is
	// renamed when the build is complete).
	if !strings.Contains(string(log), "-fprofile-use=") || !strings.Contains(string(log), filepath.Base(tr.Profile)) || !strings.Contains(string(log), "-flto=thin") {
		t.Errorf("the optimised build's log (%s) does not compile with the profile and thin LTO", optimised)
	}
}

// TestBuildPGOGCC builds with gcc's PGO: the training run left .gcda
// files, the optimised build compiled every object with -fprofile-use and
// -Wmissing-profile without one warning that a function's or a file's
// profile was missing or did not match, and the profile laid the code
// out: gcc puts the functions the training never ran in .text.unlikely,
// which the linker places before the rest, so in the binary the commands
// the ping/set/get training never sent (DEBUG, SORT, BITCOUNT) come
// before those it ran, where without a profile they follow the objects'
// link order (server.o, t_string.o before sort.o, bitops.o, debug.o).
func TestBuildPGOGCC(t *testing.T) {
	needBuildTools(t, "gcc")
	p := build(t, gccPGOSpec)
	tr := p.Training
	if tr == nil || tr.Functions == 0 || tr.MissingWarnings != 0 {
		t.Fatalf("training: %+v", tr)
	}
	gcda, _ := filepath.Glob(filepath.Join(tr.Profile, "*.gcda"))
	if len(gcda) != tr.Functions {
		t.Errorf("%d .gcda files kept in %s, the provenance says %d", len(gcda), tr.Profile, tr.Functions)
	}
	log, err := os.ReadFile(stepLog(t, p, "optimised-build"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-fprofile-use=", "-Wmissing-profile", "-c server.c"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the optimised build's log has no %q", want)
		}
	}
	if strings.Contains(string(log), "coverage mismatch") || strings.Contains(string(log), "profile count data file not found") {
		t.Errorf("the optimised build's log reports a profile that does not match")
	}
	untrained := []string{"debugCommand", "sortCommand", "bitcountCommand"}
	trained := []string{"processCommand", "pingCommand", "setCommand", "getCommand"}
	if !before(t, p.Binary, untrained, trained) {
		t.Errorf("%s: the untrained commands do not come before the trained ones: the profile did not lay out the code", p.Binary)
	}
	if plain := build(t, gccSpec).Binary; before(t, plain, untrained, trained) {
		t.Errorf("%s (no profile) lays the commands out as the PGO build does: the check shows nothing", plain)
	}
	serves(t, p.Binary)
}

func stepLog(t *testing.T, p buildspec.Provenance, name string) string {
	t.Helper()
	for _, s := range p.Steps {
		if s.Name == name {
			return s.Log
		}
	}
	t.Fatalf("no step %s in %+v", name, p.Steps)
	return ""
}

// before says whether every function of first is at a lower address in
// bin than every function of then.
func before(t *testing.T, bin string, first, then []string) bool {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	addr := map[string]uint64{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			addr[s.Name] = s.Value
		}
	}
	var lastFirst, firstThen uint64 = 0, ^uint64(0)
	for _, n := range first {
		lastFirst = max(lastFirst, lookup(t, bin, addr, n))
	}
	for _, n := range then {
		firstThen = min(firstThen, lookup(t, bin, addr, n))
	}
	return lastFirst < firstThen
}

func lookup(t *testing.T, bin string, addr map[string]uint64, name string) uint64 {
	t.Helper()
	a, ok := addr[name]
	if !ok {
		t.Fatalf("%s has no function %s", bin, name)
	}
	return a
}

// TestBuildBOLT builds gcc's PGO then BOLT (bolt-16 installs llvm-bolt-16):
// the binary linked with its relocations, instrumented by llvm-bolt,
// trained, and rewritten with that profile. The result carries BOLT's
// note, its profile covers functions, the layout steps ran, and the
// server it makes answers.
func TestBuildBOLT(t *testing.T) {
	needBuildTools(t, "gcc", "llvm-bolt-16")
	if _, err := FindBolt(context.Background()); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	p := build(t, boltSpec)
	tr := p.Training
	if tr == nil || !tr.BOLT || tr.BOLTFunctions == 0 || tr.Functions == 0 {
		t.Fatalf("training: %+v", tr)
	}
	if _, err := os.Stat(tr.BOLTProfile); err != nil {
		t.Errorf("BOLT's profile is not kept with the binary: %v", err)
	}
	for _, step := range []string{"bolt-instrument", "bolt-train", "bolt-optimise"} {
		stepLog(t, p, step)
	}
	f, err := elf.Open(p.Binary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Section(".note.bolt_info") == nil {
		t.Errorf("%s has no .note.bolt_info: not rewritten by llvm-bolt", p.Binary)
	}
	serves(t, p.Binary)
}

// serves runs the write-up's workload against a server from bin for a
// few seconds: a binary that starts is not yet one that serves (a BOLT
// rewrite once crashed in SET, not before).
func serves(t *testing.T, bin string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := BenchTraining(ctx, Training{Binary: bin, Workload: "-t ping,set,get -P 16 -d 1000 -c 50", Duration: 3 * time.Second})
	if err != nil {
		t.Fatalf("%s under load: %v", bin, err)
	}
}

// clangProfileRuntime is what clang's -fprofile-generate links (Debian 12's
// clang 14; libclang-rt-14-dev).
const clangProfileRuntime = "/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.profile-x86_64.a"
