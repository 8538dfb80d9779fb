package redisbuild

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"redline/internal/trusted"
)

// Toolchain is the compiler a build uses, as found on this machine.
type Toolchain struct {
	Path    string // resolved
	Family  string // gcc or clang
	Version string // the first line of --version
	Major   string // the major version, for versioned tools (llvm-profdata-14)
}

// FindToolchain resolves cc (default gcc) and asks it what it is.
func FindToolchain(ctx context.Context, cc string) (Toolchain, error) {
	if cc == "" {
		cc = "gcc"
	}
	p, err := trusted.Program(cc)
	if err != nil {
		return Toolchain{}, SpecError{fmt.Errorf("build: compiler %s not found (install it: apt-get install -y gcc, or clang lld llvm): %w", cc, err)}
	}
	if p, err = filepath.Abs(p); err != nil {
		return Toolchain{}, err
	}
	out, err := exec.CommandContext(ctx, p, "--version").Output()
	if err != nil {
		return Toolchain{}, fmt.Errorf("build: %s --version: %w", p, err)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	t := Toolchain{Path: p, Version: strings.TrimSpace(first), Family: family(string(out))}
	if t.Family == "" {
		return Toolchain{}, SpecError{fmt.Errorf("build: %s is neither gcc nor clang (%s)", p, t.Version)}
	}
	if v, err := exec.CommandContext(ctx, p, "-dumpversion").Output(); err == nil {
		t.Major, _, _ = strings.Cut(strings.TrimSpace(string(v)), ".")
	}
	return t, nil
}

func family(versionOutput string) string {
	switch {
	case strings.Contains(versionOutput, "clang"):
		return "clang"
	case strings.Contains(versionOutput, "Free Software Foundation"), strings.Contains(versionOutput, "gcc"):
		return "gcc"
	}
	return ""
}

// ProfileRuntime checks that clang can link -fprofile-generate: its
// profile runtime (libclang_rt.profile-ARCH.a in clang's runtime
// directory) is a package of its own on Debian (libclang-rt-N-dev), which
// clang does not pull in without recommends; without it the instrumented
// build fails at its last link, minutes in.
func (t Toolchain) ProfileRuntime(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, t.Path, "-print-runtime-dir").Output()
	if err != nil {
		return fmt.Errorf("build: %s -print-runtime-dir: %w", t.Path, err)
	}
	dir := strings.TrimSpace(string(out))
	arch, err := exec.CommandContext(ctx, t.Path, "-dumpmachine").Output()
	if err != nil {
		return fmt.Errorf("build: %s -dumpmachine: %w", t.Path, err)
	}
	cpu, _, _ := strings.Cut(strings.TrimSpace(string(arch)), "-")
	lib := filepath.Join(dir, "libclang_rt.profile-"+cpu+".a")
	if _, err := os.Stat(lib); err != nil {
		return SpecError{fmt.Errorf("build: clang's profile runtime %s is missing, needed for pgo (install it: apt-get install -y libclang-rt-%s-dev)", lib, t.Major)}
	}
	return nil
}

// Tool finds an LLVM tool that goes with a clang: name, or name-MAJOR.
func (t Toolchain) Tool(name string) (string, error) {
	for _, n := range []string{name + "-" + t.Major, name} {
		if p, err := trusted.Program(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("build: %s not found (install it: apt-get install -y llvm)", name)
}

// ltoFlags are the compile and link flags of an LTO setting.
func (t Toolchain) ltoFlags(lto string) ([]string, error) {
	switch {
	case lto == "":
		return nil, nil
	case t.Family == "gcc" && lto == "thin":
		return nil, SpecError{fmt.Errorf("build: gcc has no thin LTO (lto: full, or cc: clang)")}
	case t.Family == "gcc":
		return []string{"-flto=auto"}, nil
	}
	if _, err := trusted.Program("ld.lld"); err != nil {
		return nil, fmt.Errorf("build: clang LTO links with lld: ld.lld not found (apt-get install -y lld)")
	}
	return []string{"-flto=" + lto, "-fuse-ld=lld"}, nil
}

// profileFlags are the instrumented build's flags (use == "") or the
// optimised build's (use is the profile: a .profdata file for clang, the
// .gcda directory for gcc).
func (t Toolchain) profileFlags(dir, use string) []string {
	switch {
	case use == "" && t.Family == "gcc":
		return []string{"-fprofile-generate=" + dir, "-fprofile-update=prefer-atomic"}
	case use == "":
		return []string{"-fprofile-generate=" + dir}
	case t.Family == "gcc":
		return []string{"-fprofile-use=" + use, "-fprofile-correction", "-Wmissing-profile"}
	}
	return []string{"-fprofile-use=" + use, "-Wprofile-instr-missing", "-Wprofile-instr-out-of-date"}
}
