// Package buildspec holds how to build a redis-server and what a build
// did: the words redisbuild, the server-host API and the lab's saved
// results share (a leaf: it imports nothing of redline).
package buildspec

import (
	"fmt"
	"strings"
	"time"
)

// Spec says how to build a redis-server (redline build, or a lab
// variant's server: {build: {...}}). Every flag is a compiler flag,
// checked before anything runs (redisbuild.Validate).
type Spec struct {
	// Source is a Redis source tree, a release tarball (.tar.gz, .tgz,
	// .tar.xz) or "debian": the distribution's source package, fetched
	// with apt-get source (docs/build.md).
	Source string `json:"source" yaml:"source"`
	// CC is the compiler: gcc, clang, or whatever names one (default gcc).
	CC string `json:"cc,omitempty" yaml:"cc,omitempty"`
	// Opt is the optimisation level, Redis's OPTIMIZATION (default -O2).
	Opt string `json:"opt,omitempty" yaml:"opt,omitempty"`
	// March and Mcpu become -march= and -mcpu=.
	March string `json:"march,omitempty" yaml:"march,omitempty"`
	Mcpu  string `json:"mcpu,omitempty" yaml:"mcpu,omitempty"`
	// LTO is "" (none), "full" or "thin" (clang only; it links with lld).
	LTO string `json:"lto,omitempty" yaml:"lto,omitempty"`
	// Allocator is jemalloc (as shipped in deps/, the default), libc, or
	// mimalloc / tcmalloc linked in from the OS packages.
	Allocator string `json:"allocator,omitempty" yaml:"allocator,omitempty"`
	// CFlags and LDFlags are more flags for Redis's own objects and link.
	CFlags  []string `json:"cflags,omitempty" yaml:"cflags,omitempty"`
	LDFlags []string `json:"ldflags,omitempty" yaml:"ldflags,omitempty"`
	// PGO adds an instrumented build, a training run and the optimised
	// build that uses its profile.
	PGO *PGO `json:"pgo,omitempty" yaml:"pgo,omitempty"`
}

// PGO is the training run of a profile-guided build.
type PGO struct {
	// Workload is a redline bench line (default: the lab variant's first
	// workload, or -t set,get -c 50 -r 100000 for redline build).
	Workload string `json:"workload,omitempty" yaml:"workload,omitempty"`
	// Duration of the training run (default 20s).
	Duration string `json:"duration,omitempty" yaml:"duration,omitempty"`
	// BOLT runs llvm-bolt on the optimised binary when it is installed.
	BOLT bool `json:"bolt,omitempty" yaml:"bolt,omitempty"`
}

// Provenance is what was compiled, how, and what it cost: recorded
// next to the binary and in every result that used it.
type Provenance struct {
	Binary          string   `json:"binary"`
	Key             string   `json:"key"` // the cache key: source + toolchain + flags
	Source          string   `json:"source"`
	SourceKind      string   `json:"source_kind"` // tree, tarball, debian
	SourceVersion   string   `json:"source_version,omitempty"`
	SourceSHA256    string   `json:"source_sha256"`
	Compiler        string   `json:"compiler"` // the resolved path
	CompilerVersion string   `json:"compiler_version"`
	Make            []string `json:"make"` // the make variables given (CC, OPTIMIZATION, MALLOC, REDIS_CFLAGS, ...)
	Allocator       string   `json:"allocator"`
	LTO             string   `json:"lto,omitempty"`
	// Training is the PGO training workload and its profile.
	Training *Training `json:"training,omitempty"`
	Steps    []Step    `json:"steps"`
	// Cached says this binary came from the cache (its steps are those of
	// the build that made it).
	Cached bool     `json:"cached,omitempty"`
	Notes  []string `json:"notes,omitempty"`
}

// Training is a PGO training run and what it produced.
type Training struct {
	Workload string `json:"workload"`
	Duration string `json:"duration"`
	Profile  string `json:"profile"` // the merged .profdata, or the .gcda directory
	// Functions is how many functions the profile has counts for
	// (llvm-profdata show), or how many .gcda files gcc wrote.
	Functions int `json:"functions"`
	// MissingWarnings counts the optimised build's missing-profile
	// warnings (-Wmissing-profile, -Wprofile-instr-missing).
	MissingWarnings int  `json:"missing_warnings"`
	BOLT            bool `json:"bolt,omitempty"`
	// BOLTProfile is llvm-bolt's profile from its instrumented copy's
	// training run; BOLTFunctions how many functions it has counts for.
	BOLTProfile   string `json:"bolt_profile,omitempty"`
	BOLTFunctions int    `json:"bolt_functions,omitempty"`
}

// Step is one step of a build and its time.
type Step struct {
	Name    string  `json:"name"` // fetch, extract, build, instrumented-build, train, merge, optimised-build, bolt
	Seconds float64 `json:"seconds"`
	Log     string  `json:"log,omitempty"`
}

// String is a build spec in a line: "clang -O3 -march=native lto thin pgo, allocator mimalloc".
func (b Spec) String() string {
	parts := []string{orDefault(b.CC, "gcc"), orDefault(b.Opt, "-O2")}
	if b.March != "" {
		parts = append(parts, "-march="+b.March)
	}
	if b.Mcpu != "" {
		parts = append(parts, "-mcpu="+b.Mcpu)
	}
	parts = append(parts, b.CFlags...)
	if b.LTO != "" {
		parts = append(parts, "lto "+b.LTO)
	}
	if b.PGO != nil {
		parts = append(parts, "pgo")
	}
	return fmt.Sprintf("%s from %s, allocator %s", strings.Join(parts, " "), b.Source, orDefault(b.Allocator, "jemalloc"))
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// Lines is the provenance as the terminal and the reports show it.
func (p Provenance) Lines() []string {
	state := "built"
	if p.Cached {
		state = "cached"
	}
	lines := []string{
		fmt.Sprintf("%s: %s", state, p.Binary),
		fmt.Sprintf("source: %s %s %s (sha256 %s)", p.SourceKind, p.SourceVersion, p.Source, shortHash(p.SourceSHA256)),
		fmt.Sprintf("compiler: %s (%s)", p.Compiler, p.CompilerVersion),
		"make: " + strings.Join(p.Make, " "),
		"allocator: " + p.Allocator,
	}
	if t := p.Training; t != nil {
		lines = append(lines, fmt.Sprintf("pgo: trained %s on %q; profile %s (%d functions/objects, %d missing-profile warnings)",
			t.Duration, t.Workload, t.Profile, t.Functions, t.MissingWarnings))
		if t.BOLT {
			lines = append(lines, fmt.Sprintf("bolt: trained the same way; profile %s (%d functions with counts)", t.BOLTProfile, t.BOLTFunctions))
		}
	}
	var steps []string
	for _, st := range p.Steps {
		steps = append(steps, fmt.Sprintf("%s %s", st.Name, time.Duration(st.Seconds*float64(time.Second)).Round(100*time.Millisecond)))
	}
	lines = append(lines, "steps: "+strings.Join(steps, ", "))
	return append(lines, p.Notes...)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
