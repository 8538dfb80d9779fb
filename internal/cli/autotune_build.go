package cli

// autotune's server.build knob (issue 28's autotune variant): the user
// names build specs, --build NAME=SPEC with SPEC in redline build's flags;
// each is built (or found in the cache) by the server host's Builder
// before the session's first measurement, and a trial with
// server.build=NAME runs on a server started from that binary, beside the
// baseline's like every start-up knob (internal/target/trial.go). The specs and
// their provenance are journaled with the session's target, so --resume
// builds the same specs, finds the same binaries in the cache, and
// refuses to go on when a spec now makes another binary.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"redline/internal/autotune"
	"redline/internal/bench/cmdline"
	"redline/internal/redisbuild"
	"redline/internal/target"
	"redline/internal/textsafe"
)

// autotuneBuildFlags are the command line's --build and --trust-build.
type autotuneBuildFlags struct {
	specs []string
	trust bool
}

// buildNameShape is a build's name: a knob value in the terminal, the
// report and plan.yaml.
var buildNameShape = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$`)

func (f *autotuneBuildFlags) define(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.specs, "build", nil, `try a redis-server built from SPEC as server.build=NAME (repeatable): NAME=SPEC, SPEC in redline build's flags: o3="--source debian -O -O3"`)
	cmd.Flags().BoolVar(&f.trust, "trust-build", false, "build --build specs from a source tree, a tarball or a compiler path (their Makefile and compiler run as you, root); without it only --source debian with a compiler on PATH")
}

// finishBuilds parses the --build specs into the target (a resumed
// session takes its journal's) and holds each to the build rules and,
// unless --trust-build, to the rules of a spec someone else wrote: a
// journal is a file too.
func (o *autotuneOptions) finishBuilds() error {
	if o.engine.Resume && len(o.build.specs) > 0 {
		return usageError("redline autotune: --build with --resume: the session builds the specs its journal names")
	}
	for _, arg := range o.build.specs {
		b, err := parseAutotuneBuild(arg)
		if err != nil {
			return usageError("redline autotune: --build %q: %v", textsafe.Printable(arg), err)
		}
		if slices.ContainsFunc(o.target.Builds, func(x target.Build) bool { return x.Name == b.Name }) {
			return usageError("redline autotune: --build %s: the name is given twice", b.Name)
		}
		o.target.Builds = append(o.target.Builds, b)
	}
	if len(o.target.Builds) > 0 && len(o.target.Knobs) > 0 && !slices.Contains(o.target.Knobs, "server.build") {
		return usageError("redline autotune: --build gives server.build its values, but --knob leaves server.build out")
	}
	for _, b := range o.target.Builds {
		if !buildNameShape.MatchString(b.Name) {
			return usageError("redline autotune: build name %q: letters, digits, _ . - (at most 32)", b.Name)
		}
		if err := redisbuild.Validate(b.Spec); err != nil {
			return usageError("redline autotune: --build %s: %v", b.Name, err)
		}
		if err := redisbuild.CheckUntrusted(b.Spec); err != nil && !o.build.trust {
			return usageError("redline autotune: --build %s: %v (if you wrote the spec and its source, run with --trust-build)", b.Name, err)
		}
	}
	return nil
}

// parseAutotuneBuild parses NAME=SPEC with redline build's own spec flags.
func parseAutotuneBuild(arg string) (target.Build, error) {
	name, line, ok := strings.Cut(arg, "=")
	if !ok || !buildNameShape.MatchString(name) {
		return target.Build{}, errors.New(`want NAME=SPEC, NAME of letters, digits, _ . - (o3="--source debian -O -O3")`)
	}
	words, err := cmdline.SplitShell(line)
	if err != nil {
		return target.Build{}, err
	}
	var bo buildOptions
	fs := pflag.NewFlagSet("build", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bo.specFlags(fs)
	if err := fs.Parse(words); err != nil {
		return target.Build{}, fmt.Errorf("%v (SPEC takes redline build's flags: --source, --cc, -O, --march, --mcpu, --lto, --allocator, --cflag, --ldflag, --pgo ...)", err)
	}
	if fs.NArg() > 0 {
		return target.Build{}, fmt.Errorf("unexpected %q in SPEC", fs.Arg(0))
	}
	return target.Build{Name: name, Spec: bo.buildSpec()}, nil
}

// autotuneBuildLines are the report's Builds section: each server.build
// value with its spec and its binary's provenance.
func autotuneBuildLines(builds []target.Build) []string {
	var out []string
	for _, x := range builds {
		l := x.Name + ": " + x.Spec.String()
		if x.Built == nil {
			l += "; not built (an attached server is never restarted)"
		} else {
			l += "; " + strings.Join(x.Built.Lines(), "; ")
		}
		out = append(out, l)
	}
	return out
}

// autotuneResultJSON is result.json: the engine's result and the
// session's builds with their provenance (what each server.build value
// ran).
func autotuneResultJSON(res *autotune.Result, builds []target.Build) []byte {
	b, _ := json.MarshalIndent(struct {
		*autotune.Result
		Builds []target.Build `json:"builds,omitempty"`
	}{res, builds}, "", "  ")
	return append(b, '\n')
}
