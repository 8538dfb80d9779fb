package redisbuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/labdata"
	"redline/internal/testutil"
)

// The CI's two builds, shared through the cache (/var/cache/redline/build)
// with the lab test in internal/cli and with write-up 003's lab
// (examples/writeup-003-build.yaml names the same specs).
var (
	gccSpec = labdata.BuildSpec{Source: DebianSource}
	pgoSpec = labdata.BuildSpec{Source: DebianSource, CC: "clang", Opt: "-O3", LTO: "thin",
		PGO: &labdata.PGOSpec{Workload: "-t ping,set,get -P 16 -d 1000 -c 50", Duration: "10s"}}
)

// needBuildTools: root (the cache is under /var/cache and apt-get source
// runs as root) and the tools .ci/run installs.
func needBuildTools(t *testing.T, tools ...string) {
	t.Helper()
	testutil.NeedRoot(t)
	testutil.NeedTools(t, append([]string{"apt-get", "dpkg-source", "make"}, tools...)...)
}

func build(t *testing.T, spec labdata.BuildSpec) labdata.BuildProvenance {
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
	needBuildTools(t, "clang", "ld.lld", "llvm-profdata")
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
