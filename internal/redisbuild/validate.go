package redisbuild

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"redline/internal/bench/cmdline"
	"redline/internal/buildspec"
)

// flagShape is what a compiler flag may look like here: make splits its
// variables on blanks and hands recipes to /bin/sh, so a blank, a quote,
// $, ;, |, & or a backtick would be a second word or a shell command.
var flagShape = regexp.MustCompile(`^-[A-Za-z0-9][A-Za-z0-9_=.,:+/-]*$`)

var (
	wordShape = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)
	optShape  = regexp.MustCompile(`^-(O[0-3sgz]?|Ofast)$`)
	ccShape   = regexp.MustCompile(`^[A-Za-z0-9_./+-]+$`)
)

// refusedFlags are compiler flags a build spec may not give: those that
// run other programs or load code into the compiler, those that change
// what the build writes, and those that belong to an option of their own
// (opt, march, mcpu, lto, pgo), so one setting is said in one place.
var refusedFlags = []struct{ prefix, why string }{
	{"-wrapper", "runs another program"},
	{"-fplugin", "loads code into the compiler"},
	{"-fpass-plugin", "loads code into the compiler"},
	{"-X", "passes raw options to a tool the compiler runs (-Xlinker -plugin= loads code into the linker)"},
	{"-Wa,", "passes raw options to the assembler"},
	{"-Wp,", "passes raw options to the preprocessor"},
	{"-B", "changes where the compiler finds its programs"},
	{"-specs", "replaces the compiler's driver specs"},
	{"--specs", "replaces the compiler's driver specs"},
	{"-o", "changes what the build writes"},
	{"-save-temps", "writes into the source tree"},
	{"-O", "is the opt setting"},
	{"-march", "is the march setting"},
	{"-mcpu", "is the mcpu setting"},
	{"-flto", "is the lto setting"},
	{"-fuse-ld", "is chosen by the lto setting"},
	{"-fprofile", "is the pgo setting"},
	{"-fauto-profile", "is the pgo setting"},
}

// SpecError is a build spec this machine cannot build as asked (a
// compiler that is not there, an LTO kind it lacks): the user's to fix,
// like a bad flag, not a failed build.
type SpecError struct{ Err error }

func (e SpecError) Error() string { return e.Err.Error() }
func (e SpecError) Unwrap() error { return e.Err }

// Allocators are the allocator values a build spec may name.
var Allocators = []string{"jemalloc", "libc", "mimalloc", "tcmalloc"}

// Validate checks a build spec before anything runs: every flag has a
// compiler flag's shape and is not refused, the settings are known values.
func Validate(s buildspec.Spec) error {
	if strings.TrimSpace(s.Source) == "" {
		return fmt.Errorf("build: source is required (a source tree, a release tarball, or debian)")
	}
	if s.CC != "" && !ccShape.MatchString(s.CC) {
		return fmt.Errorf("build: cc %q is not a compiler name or path", s.CC)
	}
	if s.Opt != "" && !optShape.MatchString(s.Opt) {
		return fmt.Errorf("build: opt %q is not an optimisation level (-O0..-O3, -Os, -Oz, -Og, -Ofast)", s.Opt)
	}
	for _, w := range []struct{ name, v string }{{"march", s.March}, {"mcpu", s.Mcpu}} {
		if w.v != "" && !wordShape.MatchString(w.v) {
			return fmt.Errorf("build: %s %q is not a CPU name", w.name, w.v)
		}
	}
	if s.LTO != "" && s.LTO != "full" && s.LTO != "thin" {
		return fmt.Errorf("build: lto %q: full or thin (or leave it out)", s.LTO)
	}
	if s.Allocator != "" && !contains(Allocators, s.Allocator) {
		return fmt.Errorf("build: allocator %q: one of %s", s.Allocator, strings.Join(Allocators, ", "))
	}
	for _, list := range [][]string{s.CFlags, s.LDFlags} {
		if err := checkFlags(list); err != nil {
			return err
		}
	}
	return validatePGO(s.PGO)
}

func validatePGO(p *buildspec.PGO) error {
	if p == nil {
		return nil
	}
	if p.Duration != "" {
		if d, err := time.ParseDuration(p.Duration); err != nil || d <= 0 {
			return fmt.Errorf("build: pgo.duration %q is not a positive duration (20s)", p.Duration)
		}
	}
	return CheckWorkload(p.Workload)
}

// CheckWorkload checks a PGO training workload ("" is the default) before
// minutes of an instrumented build: it is a redline bench line.
func CheckWorkload(line string) error {
	if line == "" {
		return nil
	}
	if _, err := cmdline.ParseWorkload(line); err != nil {
		return fmt.Errorf("build: pgo.workload: %w", err)
	}
	return nil
}

// checkFlags checks a list of flags; "-mllvm" takes the next item as its
// argument (-mllvm -inline-threshold=2000), which is checked as a flag too.
func checkFlags(flags []string) error {
	for i := 0; i < len(flags); i++ {
		fl := flags[i]
		if fl == "-mllvm" {
			if i+1 == len(flags) {
				return fmt.Errorf("build: -mllvm needs its argument as the next flag")
			}
			i++
			fl = flags[i]
		}
		if err := checkFlag(fl); err != nil {
			return err
		}
	}
	return nil
}

func checkFlag(fl string) error {
	if !flagShape.MatchString(fl) {
		return fmt.Errorf("build: %q is not a compiler flag (a dash, then letters, digits and _=.,:+/- only)", fl)
	}
	for _, r := range refusedFlags {
		if strings.HasPrefix(fl, r.prefix) {
			return fmt.Errorf("build: flag %s refused: it %s", fl, r.why)
		}
	}
	if strings.Contains(fl, "/") {
		return fmt.Errorf("build: flag %s refused: it names a path (a flag may read or write files only inside the build tree: -include/etc/shadow shows a line of it, -MF/etc/x writes it)", fl)
	}
	if rest, ok := strings.CutPrefix(fl, "-Wl,"); ok {
		return checkLinkerFlag(fl, rest)
	}
	return nil
}

// linkerOptions are the linker options a -Wl, flag may pass, each part
// of its comma list one of them: link-time performance and hardening
// switches, none of which loads code (-plugin), names a program
// (--dynamic-linker) or reads or writes a file (-o, -Map, -T, @file).
var linkerOptions = []string{
	"-O0", "-O1", "-O2", "--as-needed", "--no-as-needed", "--gc-sections", "--no-gc-sections",
	"--icf=all", "--icf=safe", "--icf=none", "-z", "now", "lazy", "relro", "norelro", "noexecstack",
	"--hash-style=gnu", "--hash-style=sysv", "--hash-style=both", "--sort-common", "--emit-relocs",
	"-q", "--relax", "--no-relax", "--build-id", "--strip-all", "-s", "--strip-debug", "-S",
	"-znow", "-zrelro", "-zlazy", "-znorelro", "-znoexecstack",
}

func checkLinkerFlag(fl, list string) error {
	for _, part := range strings.Split(list, ",") {
		if !contains(linkerOptions, part) {
			return fmt.Errorf("build: flag %s refused: linker option %q is not one of %s", fl, part, strings.Join(linkerOptions, " "))
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
