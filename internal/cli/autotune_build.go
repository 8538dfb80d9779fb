package cli

// autotune's server.build knob (issue 28's autotune variant): the user
// names build specs, --build NAME=SPEC with SPEC in redline build's flags;
// each is built (or found in the cache) by the server host's Builder
// before the session's first measurement, and a trial with
// server.build=NAME runs on a server started from that binary, beside the
// baseline's like every start-up knob (autotune_trial.go). The specs and
// their provenance are journaled with the session's target, so --resume
// builds the same specs, finds the same binaries in the cache, and
// refuses to go on when a spec now makes another binary.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"redline/internal/autotune"
	"redline/internal/bench/cmdline"
	"redline/internal/labdata"
	"redline/internal/redisbuild"
	"redline/internal/serverhost"
	"redline/internal/textsafe"
)

// autotuneBuild is one --build NAME=SPEC and, once built, what was built.
type autotuneBuild struct {
	Name  string                   `json:"name"`
	Spec  labdata.BuildSpec        `json:"spec"`
	Built *labdata.BuildProvenance `json:"built,omitempty"`
}

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
		if slices.ContainsFunc(o.target.Builds, func(x autotuneBuild) bool { return x.Name == b.Name }) {
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
func parseAutotuneBuild(arg string) (autotuneBuild, error) {
	name, line, ok := strings.Cut(arg, "=")
	if !ok || !buildNameShape.MatchString(name) {
		return autotuneBuild{}, errors.New(`want NAME=SPEC, NAME of letters, digits, _ . - (o3="--source debian -O -O3")`)
	}
	words, err := cmdline.SplitShell(line)
	if err != nil {
		return autotuneBuild{}, err
	}
	var bo buildOptions
	fs := pflag.NewFlagSet("build", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bo.specFlags(fs)
	if err := fs.Parse(words); err != nil {
		return autotuneBuild{}, fmt.Errorf("%v (SPEC takes redline build's flags: --source, --cc, -O, --march, --mcpu, --lto, --allocator, --cflag, --ldflag, --pgo ...)", err)
	}
	if fs.NArg() > 0 {
		return autotuneBuild{}, fmt.Errorf("unexpected %q in SPEC", fs.Arg(0))
	}
	return autotuneBuild{Name: name, Spec: bo.buildSpec()}, nil
}

// buildNames are the values of server.build in this session.
func (t autotuneTarget) buildNames() []string {
	var names []string
	for _, b := range t.Builds {
		names = append(names, b.Name)
	}
	return names
}

// buildServers builds every --build spec on the server host (its Builder:
// this machine's cache, or the session's there), before the first
// measurement; a PGO spec that names no training trains with the
// session's workload. An attached server is never restarted, so nothing
// is built for it (server.build is untested, cannotStart says why).
func (t *localTarget) buildServers(ctx context.Context, s *streams, o *autotuneOptions) error {
	builds := o.target.Builds
	if len(builds) == 0 || !t.restarts() { // a managed server or cluster
		return nil
	}
	fmt.Fprintf(s.out, "building %d --build spec(s)%s before the first measurement (a cached spec at once, a build from source in minutes)\n", len(builds), onHost(t.host.Info()))
	start := time.Now()
	t.built = map[string]labdata.BuildProvenance{}
	for i := range builds {
		b := &builds[i]
		prov, err := t.host.Build(ctx, serverhost.BuildArgs{Spec: b.Spec, Workload: o.target.Workload})
		switch {
		case errors.As(err, new(redisbuild.SpecError)):
			return usageError("redline autotune: --build %s: %v", b.Name, err)
		case err != nil:
			return exitCode(ExitFailure, fmt.Sprintf("redline autotune: --build %s: %v", b.Name, err))
		case b.Built != nil && b.Built.Key != prov.Key:
			return usageError("redline autotune: --build %s makes another binary than the session measured (cache key %s, now %s: its source or compiler changed); start a new session", b.Name, b.Built.Key, prov.Key)
		}
		b.Built, t.built[b.Name] = &prov, prov
		fmt.Fprintf(s.out, "build %s: %s\n", b.Name, buildLine(prov))
	}
	t.buildTime = time.Since(start)
	return nil
}

// buildLine is one line of a build's provenance: cached or built, the
// binary, the compiler, the make variables and the source's hash.
func buildLine(p labdata.BuildProvenance) string {
	return strings.Join(p.Lines()[:min(5, len(p.Lines()))], "; ")
}

// printBuildTime states the builds' time beside the estimate (it is not
// part of --budget: the builds are done before the first measurement).
func (t *localTarget) printBuildTime(w io.Writer) {
	if len(t.built) == 0 {
		return
	}
	var cached []string
	for name, p := range t.built {
		if p.Cached {
			cached = append(cached, name)
		}
	}
	slices.Sort(cached)
	fmt.Fprintf(w, "builds: %d took %s before the first measurement, outside the budget (cached: %s)\n",
		len(t.built), t.buildTime.Round(100*time.Millisecond), cmpOrNone(strings.Join(cached, ", ")))
}

func cmpOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// startBuild points a at the binary built as name.
func (t *localTarget) startBuild(a *serverhost.RedisStartArgs, name string) error {
	p, ok := t.built[name]
	if !ok {
		return fmt.Errorf("no build %q in this session (--build %s=SPEC)", name, name)
	}
	a.Binary = p.Binary
	return nil
}

// cannotBuild: a build this session did not make, or one that made the
// binary of an earlier name (the same spec twice: a comparison of a
// server with itself).
func (t *localTarget) cannotBuild(name string) string {
	p, ok := t.built[name]
	if !ok {
		return fmt.Sprintf("no build %q in this session", name)
	}
	for other, q := range t.built {
		if other < name && q.Binary == p.Binary {
			return fmt.Sprintf("the same binary as build %s (%s)", other, p.Binary)
		}
	}
	return ""
}

// buildNotes are plan.yaml's notes on the builds the final config runs:
// the binary to start, with its provenance (a plan cannot start it).
func buildNotes(final autotune.Config, builds []autotuneBuild) []string {
	var notes []string
	for _, s := range final {
		i := slices.IndexFunc(builds, func(b autotuneBuild) bool { return s.Knob == "server.build" && b.Name == s.Value })
		if i < 0 || builds[i].Built == nil {
			continue
		}
		p := builds[i].Built
		notes = append(notes, fmt.Sprintf("server.build = %s: start %s on the server host (%s); %s", s.Value, p.Binary, builds[i].Spec, strings.Join(p.Lines()[1:], "; ")))
	}
	return notes
}

// autotuneBuildLines are the report's Builds section: each server.build
// value with its spec and its binary's provenance.
func autotuneBuildLines(builds []autotuneBuild) []string {
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
func autotuneResultJSON(res *autotune.Result, builds []autotuneBuild) []byte {
	b, _ := json.MarshalIndent(struct {
		*autotune.Result
		Builds []autotuneBuild `json:"builds,omitempty"`
	}{res, builds}, "", "  ")
	return append(b, '\n')
}
