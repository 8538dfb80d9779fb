package redisbuild

import (
	"strings"
	"testing"

	"redline/internal/buildspec"
)

func TestValidate(t *testing.T) {
	ok := buildspec.Spec{Source: "debian"}
	cases := []struct {
		name string
		edit func(*buildspec.Spec)
		err  string // "" for valid
	}{
		{"plain", func(*buildspec.Spec) {}, ""},
		{"write-up 003", func(s *buildspec.Spec) {
			s.CC, s.Opt, s.LTO, s.Mcpu = "clang", "-O3", "full", "tsv110"
			s.CFlags = []string{"-mllvm", "-inline-threshold=2000", "-fno-plt"}
		}, ""},
		{"no source", func(s *buildspec.Spec) { s.Source = " " }, "source is required"},
		{"shell in a flag", func(s *buildspec.Spec) { s.CFlags = []string{"-O2;touch /tmp/x"} }, "not a compiler flag"},
		{"blank in a flag", func(s *buildspec.Spec) { s.CFlags = []string{"-DX=1 -DY"} }, "not a compiler flag"},
		{"dollar", func(s *buildspec.Spec) { s.LDFlags = []string{"-L$(HOME)"} }, "not a compiler flag"},
		{"not a flag", func(s *buildspec.Spec) { s.CFlags = []string{"server.c"} }, "not a compiler flag"},
		{"wrapper", func(s *buildspec.Spec) { s.CFlags = []string{"-wrapper=/bin/sh"} }, "runs another program"},
		{"plugin", func(s *buildspec.Spec) { s.CFlags = []string{"-fplugin=/tmp/p.so"} }, "loads code"},
		{"output", func(s *buildspec.Spec) { s.CFlags = []string{"-o/tmp/x"} }, "changes what the build writes"},
		{"level twice", func(s *buildspec.Spec) { s.CFlags = []string{"-O3"} }, "is the opt setting"},
		{"lto twice", func(s *buildspec.Spec) { s.LDFlags = []string{"-flto=thin"} }, "is the lto setting"},
		{"pgo by hand", func(s *buildspec.Spec) { s.CFlags = []string{"-fprofile-use=x"} }, "is the pgo setting"},
		{"mllvm alone", func(s *buildspec.Spec) { s.CFlags = []string{"-mllvm"} }, "needs its argument"},
		{"mllvm shell", func(s *buildspec.Spec) { s.CFlags = []string{"-mllvm", "`id`"} }, "not a compiler flag"},
		// Held out (issue 24, the build): gcc -Wl,-plugin=FILE and
		// -Xlinker -plugin=FILE load FILE into the linker, which runs its
		// constructor as the user building (root in a session or a root
		// lab); -include/etc/shadow prints the file's first line in the
		// compiler's error; -MF writes where it names.
		{"linker plugin", func(s *buildspec.Spec) { s.LDFlags = []string{"-Wl,-plugin=/tmp/p.so"} }, "names a path"},
		{"linker plugin by name", func(s *buildspec.Spec) { s.LDFlags = []string{"-Wl,-plugin=p.so"} }, "linker option"},
		{"linker output", func(s *buildspec.Spec) { s.LDFlags = []string{"-Wl,-o,x"} }, "linker option"},
		{"linker map", func(s *buildspec.Spec) { s.LDFlags = []string{"-Wl,-Map=x"} }, "linker option"},
		{"Xlinker plugin", func(s *buildspec.Spec) { s.LDFlags = []string{"-Xlinker", "-plugin=p.so"} }, "raw options to a tool"},
		{"Xassembler", func(s *buildspec.Spec) { s.CFlags = []string{"-Xassembler", "-o"} }, "raw options to a tool"},
		{"assembler passthrough", func(s *buildspec.Spec) { s.CFlags = []string{"-Wa,-o,x"} }, "assembler"},
		{"preprocessor passthrough", func(s *buildspec.Spec) { s.CFlags = []string{"-Wp,-MF,x"} }, "preprocessor"},
		{"clang pass plugin", func(s *buildspec.Spec) { s.CFlags = []string{"-fpass-plugin=p.so"} }, "loads code"},
		{"include a root file", func(s *buildspec.Spec) { s.CFlags = []string{"-include/etc/shadow"} }, "names a path"},
		{"dependency file", func(s *buildspec.Spec) { s.CFlags = []string{"-MD", "-MF/etc/cron.d/x"} }, "names a path"},
		{"dump to a file", func(s *buildspec.Spec) { s.CFlags = []string{"-fdump-tree-all=/etc/x"} }, "names a path"},
		{"linker hardening", func(s *buildspec.Spec) {
			s.LDFlags = []string{"-Wl,-O1", "-Wl,--as-needed", "-Wl,-z,now", "-Wl,--icf=all"}
		}, ""},
		{"bad opt", func(s *buildspec.Spec) { s.Opt = "-O9" }, "not an optimisation level"},
		{"bad march", func(s *buildspec.Spec) { s.March = "native -fplugin=x" }, "not a CPU name"},
		{"bad lto", func(s *buildspec.Spec) { s.LTO = "yes" }, "full or thin"},
		{"bad cc", func(s *buildspec.Spec) { s.CC = "gcc;id" }, "not a compiler"},
		{"bad allocator", func(s *buildspec.Spec) { s.Allocator = "hoard" }, "one of jemalloc"},
		{"bad duration", func(s *buildspec.Spec) { s.PGO = &buildspec.PGO{Duration: "-1s"} }, "not a positive duration"},
		{"bad workload", func(s *buildspec.Spec) { s.PGO = &buildspec.PGO{Workload: "-t set --no-such-flag"} }, "pgo.workload"},
	}
	for _, c := range cases {
		s := ok
		c.edit(&s)
		err := Validate(s)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.err)
		}
	}
}

func TestDebSrc(t *testing.T) {
	list := debSrcList("deb http://deb.debian.org/debian bookworm main\n# deb http://x y z\ndeb-src http://a b c\n")
	if len(list) != 1 || list[0] != "deb-src http://deb.debian.org/debian bookworm main" {
		t.Errorf("list: %q", list)
	}
	in := "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n\nTypes: deb deb-src\nURIs: http://x\n"
	want := "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n\nTypes: deb deb-src\nURIs: http://x\n"
	if got := debSrc822(in); got != want {
		t.Errorf("deb822:\n%s\nwant\n%s", got, want)
	}
}

func TestProfFunctions(t *testing.T) {
	show := "Instrumentation level: IR  entry_first = 0\nTotal functions: 2345\nMaximum function count: 99\n"
	if n := profFunctions(show); n != 2345 {
		t.Errorf("got %d", n)
	}
}

func TestMakeVars(t *testing.T) {
	p := &plan{spec: buildspec.Spec{Source: "x", Opt: "-O3", March: "native", LTO: "full", CFlags: []string{"-fno-plt"}},
		tc: Toolchain{Path: "/usr/bin/gcc", Family: "gcc"}, src: source{kind: "tarball"}}
	v, err := p.makeVars()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(v.args(p.tc, 2, []string{"-fprofile-use=/p"}), " ")
	want := "-j2 redis-server V=1 CC=/usr/bin/gcc OPTIMIZATION=-O3 MALLOC=jemalloc " +
		"REDIS_CFLAGS=-march=native -flto=auto -fno-plt -fprofile-use=/p REDIS_LDFLAGS=-march=native -flto=auto -O3 -fprofile-use=/p"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	p.spec.LTO = "thin"
	if _, err := p.makeVars(); err == nil || !strings.Contains(err.Error(), "no thin LTO") {
		t.Errorf("gcc thin LTO: %v", err)
	}
}
