package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"redline/internal/labdata"
	"redline/internal/redisbuild"
	"redline/internal/serverhost"
)

func init() { register(newBuildCmd) }

// buildOptions are build's flags: a BuildSpec and where to build.
type buildOptions struct {
	spec        labdata.BuildSpec
	pgo         bool
	pgoWorkload string
	pgoDuration string
	bolt        bool
	cache       string
	jobs        int
	json        bool
	remote      remoteOptions
}

// run builds on the host the options name: this machine, or the --ssh
// server host (its compilers, its cache).
func (o *buildOptions) run(ctx context.Context, s *streams) error {
	spec := o.buildSpec()
	if err := redisbuild.Validate(spec); err != nil {
		return usageError("redline %v", err)
	}
	if err := o.remote.checkLink("build"); err != nil {
		return err
	}
	if o.remote.target != "" && o.cache != "" {
		return usageError("redline build: --cache is this machine's; with --ssh the server host builds in its own cache (docs/build.md)")
	}
	h, err := o.remote.openHost(ctx, s, "build", serverhost.LocalOptions{BuildCache: o.cache, BuildProgress: s.err})
	if err != nil {
		return err
	}
	defer closeHost(s, "build", h)
	if where := h.Info().Where(); where != "" {
		fmt.Fprintf(s.err, "redline build: building %s (the compiler and the cache are there)\n", where)
	}
	prov, err := h.Build(ctx, serverhost.BuildArgs{Spec: spec, Jobs: o.jobs})
	if errors.As(err, new(redisbuild.SpecError)) {
		return usageError("redline %v", err)
	}
	if err != nil {
		return exitCode(ExitFailure, "redline "+err.Error())
	}
	if !o.json {
		printWhere(s.out, h.Info())
	}
	return printBuild(s.out, prov, o.json)
}

func newBuildCmd(s *streams) *cobra.Command {
	o := &buildOptions{}
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build redis-server with a compiler, flags, LTO, PGO and an allocator linked in; cached, with provenance",
		Long: `build compiles redis-server from --source: a Redis source tree, a release tarball, or
"debian", the distribution's source package (apt-get source redis, with deb-src entries
derived from the system's deb entries in the cache directory; /etc/apt is not changed).

Builds run in a directory of their own under --cache, named by a hash of the source,
the compiler (its path and --version) and every flag; a second build of the same spec
is the cached binary. Each directory keeps the binary, its logs (one per step) and
provenance.json: compiler and version, make variables, source and its SHA-256,
allocator, PGO training workload, the time of each step.

--pgo builds twice around a training run: an instrumented build, the --pgo-workload
(a redline bench line) against it for --pgo-duration, the profile merged (llvm-profdata
for clang, the .gcda files for gcc), the optimised build. Flags are checked as compiler
flags (no blanks, quotes or shell characters; no -wrapper, -fplugin, -B, -o) and nothing
runs through a shell. With --ssh the server host builds, in its own cache, through
its redline session, which takes a compiler by name only and a source that is debian or
root-owned. docs/build.md has the details.`,
		Example: `  redline build --source debian                                   # Debian's source, gcc -O2, jemalloc
  redline build --source debian --cc clang -O -O3 --lto thin --pgo
  redline build --source redis-7.2.4.tar.gz --allocator mimalloc --march native
  redline build --source ~/src/redis --cc gcc --cflag=-fno-plt --json
  redline build --ssh admin@redis-a --source debian -O -O3 --lto full   # built on the server host`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("redline build: unexpected argument %q (see redline build --help)", args[0])
			}
			return nil
		},
		DisableAutoGenTag: true,
		RunE:              func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), s) },
	}
	o.remote.flags(cmd)
	o.remote.linkFlags(cmd) // a build takes minutes: --ssh-config and --ssh-heartbeat, as autotune's
	f := cmd.Flags()
	o.specFlags(f)
	f.StringVar(&o.cache, "cache", "", "the build cache (default "+redisbuild.DefaultCache()+")")
	f.IntVarP(&o.jobs, "jobs", "j", 0, "make -j (default: the number of CPUs)")
	f.BoolVar(&o.json, "json", false, "print the provenance as JSON")
	return cmd
}

// specFlags are the flags that make a build spec: build's own, and the
// SPEC of autotune's --build NAME=SPEC (one parser of a spec in words).
func (o *buildOptions) specFlags(f *pflag.FlagSet) {
	f.StringVar(&o.spec.Source, "source", "", `a Redis source tree, a release tarball, or "debian" (required)`)
	f.StringVar(&o.spec.CC, "cc", "", "the compiler: gcc, clang, or a path (default gcc)")
	f.StringVarP(&o.spec.Opt, "opt", "O", "", "optimisation level, Redis's OPTIMIZATION (default -O2)")
	f.StringVar(&o.spec.March, "march", "", "-march= value (native, x86-64-v3, armv8.2-a ...)")
	f.StringVar(&o.spec.Mcpu, "mcpu", "", "-mcpu= value (tsv110 ...)")
	f.StringVar(&o.spec.LTO, "lto", "", "link-time optimisation: full, or thin (clang)")
	f.StringVar(&o.spec.Allocator, "allocator", "", "jemalloc (as shipped), libc, or mimalloc / tcmalloc linked in")
	f.StringArrayVar(&o.spec.CFlags, "cflag", nil, "one more compiler flag for Redis's objects (repeatable; --cflag=-fno-plt)")
	f.StringArrayVar(&o.spec.LDFlags, "ldflag", nil, "one more link flag (repeatable; --ldflag=-Wl,-z,now)")
	f.BoolVar(&o.pgo, "pgo", false, "profile-guided: instrumented build, training run, optimised build")
	f.StringVar(&o.pgoWorkload, "pgo-workload", "", "the training load, a redline bench line (default \""+redisbuild.DefaultWorkload+"\")")
	f.StringVar(&o.pgoDuration, "pgo-duration", "", "the training run's length (default "+redisbuild.DefaultTraining.String()+")")
	f.BoolVar(&o.bolt, "bolt", false, "with --pgo: then llvm-bolt the result, with a profile from BOLT's own instrumented training run (needs llvm-bolt: apt-get install -y bolt-16)")
}

func (o *buildOptions) buildSpec() labdata.BuildSpec {
	spec := o.spec
	if o.pgo || o.pgoWorkload != "" || o.pgoDuration != "" || o.bolt {
		spec.PGO = &labdata.PGOSpec{Workload: o.pgoWorkload, Duration: o.pgoDuration, BOLT: o.bolt}
	}
	return spec
}

func printBuild(w io.Writer, prov labdata.BuildProvenance, asJSON bool) error {
	if asJSON {
		b, err := json.MarshalIndent(prov, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	for _, l := range prov.Lines() {
		fmt.Fprintln(w, l)
	}
	return nil
}
