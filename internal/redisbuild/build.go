package redisbuild

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"redline/internal/buildspec"
	"redline/internal/redisserver"
)

// recipe names this package's way of building: a change to it that
// changes the binaries changes every cache key.
const recipe = "redline-build/1"

// Options are how Build runs.
type Options struct {
	// Cache is the build cache (default DefaultCache()). Each build has a
	// directory of its own there, named by its key.
	Cache string
	// Jobs is make's -j (default the number of CPUs).
	Jobs int
	// Train runs a PGO training load against an instrumented server
	// (default BenchTraining).
	Train TrainFunc
	// Workload is the training workload when the spec names none.
	Workload string
	// Progress gets a line per step (optional).
	Progress io.Writer
}

// TrainFunc runs Training.Workload against a server started from
// Training.Binary with Training.Env for Training.Duration, and stops the
// server cleanly (its profile is written when it exits).
type TrainFunc func(ctx context.Context, t Training) error

// Training is one PGO training run.
type Training struct {
	Binary   string
	Env      []string
	Workload string
	Duration time.Duration
}

// DefaultWorkload trains a PGO build when neither the spec nor the caller
// names a workload.
const DefaultWorkload = "-t set,get -c 50 -r 100000"

// DefaultTraining is a PGO training run's length when the spec gives none.
const DefaultTraining = 20 * time.Second

// DefaultCache is where builds go: /var/cache/redline/build for root (a
// root-owned directory nobody else can write, so the lab accepts its
// binaries), the user's cache directory otherwise.
func DefaultCache() string {
	if os.Geteuid() == 0 {
		return "/var/cache/redline/build"
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "redline", "build")
	}
	return filepath.Join(os.TempDir(), "redline-build")
}

// plan is a build worked out: what will be compiled, and how.
type plan struct {
	spec     buildspec.Spec
	tc       Toolchain
	src      source
	vars     makeVars
	allocLib string // a linked-in allocator's library
	boltTool Bolt   // with pgo.bolt
	workload string
	training time.Duration
	key      string
}

// Build builds the spec's redis-server, or finds it in the cache, and
// returns its provenance (Binary is the path to run).
func Build(ctx context.Context, spec buildspec.Spec, o Options) (buildspec.Provenance, error) {
	if err := Validate(spec); err != nil {
		return buildspec.Provenance{}, err
	}
	if o.Cache == "" {
		o.Cache = DefaultCache()
	}
	if err := os.MkdirAll(o.Cache, 0o755); err != nil {
		return buildspec.Provenance{}, fmt.Errorf("build: cache %s: %w", o.Cache, err)
	}
	r := &runner{cache: o.Cache, progress: o.Progress}
	p, err := newPlan(ctx, spec, o, r)
	if err != nil {
		return buildspec.Provenance{}, err
	}
	dir := filepath.Join(o.Cache, p.key[:16])
	// One build of a key at a time (two labs, or tests in parallel): the
	// second waits, then finds the first one's binary.
	unlock, err := lockKey(ctx, dir+".lock")
	if err != nil {
		return buildspec.Provenance{}, err
	}
	defer unlock()
	if prov, err := readProvenance(dir); err == nil {
		prov.Cached = true
		return prov, nil
	}
	return p.build(ctx, o, r, dir)
}

// lockKey takes an exclusive flock on path, waiting for it until ctx ends.
func lockKey(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("build: lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("build: lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func newPlan(ctx context.Context, spec buildspec.Spec, o Options, r *runner) (*plan, error) {
	p := &plan{spec: spec}
	var err error
	if p.tc, err = FindToolchain(ctx, spec.CC); err != nil {
		return nil, err
	}
	if _, err := p.tc.ltoFlags(spec.LTO); err != nil { // before minutes of fetching
		return nil, err
	}
	if spec.Allocator == "mimalloc" || spec.Allocator == "tcmalloc" {
		if p.allocLib, err = redisserver.AllocatorLib(spec.Allocator); err != nil {
			return nil, fmt.Errorf("build: %w", err)
		}
	}
	if spec.PGO != nil {
		p.workload, p.training = trainingOf(spec.PGO, o.Workload)
		if p.tc.Family == "clang" {
			if _, err := p.tc.Tool("llvm-profdata"); err != nil {
				return nil, err
			}
			if err := p.tc.ProfileRuntime(ctx); err != nil {
				return nil, err
			}
		}
		if spec.PGO.BOLT {
			if p.boltTool, err = FindBolt(ctx); err != nil {
				return nil, err
			}
		}
	}
	fetch := func() error { p.src, err = resolveSource(ctx, spec.Source, r); return err }
	if spec.Source == DebianSource {
		err = r.step(filepath.Join(o.Cache, "debian"), "fetch", fetch)
	} else {
		err = fetch()
	}
	if err != nil {
		return nil, err
	}
	if p.vars, err = p.makeVars(); err != nil {
		return nil, err
	}
	p.key = p.cacheKey()
	return p, nil
}

func trainingOf(pgo *buildspec.PGO, fallback string) (string, time.Duration) {
	w, d := pgo.Workload, DefaultTraining
	if w == "" {
		w = fallback
	}
	if w == "" {
		w = DefaultWorkload
	}
	if pgo.Duration != "" {
		d, _ = time.ParseDuration(pgo.Duration) // Validate checked it
	}
	return w, d
}

// makeVars are the make variables of a build (without PGO's): Redis's
// Makefile reads the compiler from CC, the level from OPTIMIZATION, the
// allocator from MALLOC and Redis's own flags from REDIS_CFLAGS and
// REDIS_LDFLAGS (the deps keep theirs).
type makeVars struct {
	opt, malloc     string
	systemJemalloc  bool
	cflags, ldflags []string
}

// systemJemalloc is the library a Debian source build links for jemalloc.
const systemJemalloc = "/usr/lib/x86_64-linux-gnu/libjemalloc.so"

func (p *plan) makeVars() (makeVars, error) {
	s := p.spec
	v := makeVars{opt: orDefault(s.Opt, "-O2"), malloc: "jemalloc"}
	if s.Allocator != "" && s.Allocator != "jemalloc" {
		v.malloc = "libc"
	}
	if v.malloc == "jemalloc" && p.src.kind == "debian" {
		// Debian's patch for USE_SYSTEM_JEMALLOC renames je_mallctl and
		// friends to the system library's names whether the flag is set
		// or not (its #if compares two undefined macros), so its source
		// builds with the system jemalloc only, as Debian builds it.
		if _, err := os.Stat(systemJemalloc); err != nil {
			return v, fmt.Errorf("build: Debian's source links the system jemalloc: %s missing (apt-get install -y libjemalloc-dev), or allocator: libc", systemJemalloc)
		}
		v.systemJemalloc = true
	}
	var cpu []string
	if s.March != "" {
		cpu = append(cpu, "-march="+s.March)
	}
	if s.Mcpu != "" {
		cpu = append(cpu, "-mcpu="+s.Mcpu)
	}
	lto, err := p.tc.ltoFlags(s.LTO)
	if err != nil {
		return v, err
	}
	// LTO generates code at the link: it needs the CPU and level there too.
	boltC, boltLD := boltFlags(p.tc, s)
	v.cflags = concat(cpu, lto, s.CFlags, boltC)
	v.ldflags = concat(cpu, lto, s.LDFlags, boltLD)
	if len(lto) > 0 {
		v.ldflags = append(v.ldflags, v.opt)
	}
	if p.allocLib != "" {
		// Linked by path (the -dev package's unversioned .so is not
		// needed) and kept even where the linker drops unused libraries:
		// it comes before libc in the binary's NEEDED list, so its malloc
		// is the one the server calls.
		v.ldflags = append(v.ldflags, "-Wl,--no-as-needed", p.allocLib)
	}
	return v, nil
}

// args are make's arguments for these variables plus extra flags.
func (v makeVars) args(tc Toolchain, jobs int, extra []string) []string {
	args := []string{"-j" + strconv.Itoa(jobs), "redis-server", "V=1",
		"CC=" + tc.Path, "OPTIMIZATION=" + v.opt, "MALLOC=" + v.malloc,
		"REDIS_CFLAGS=" + strings.Join(concat(v.cflags, extra), " "),
		"REDIS_LDFLAGS=" + strings.Join(concat(v.ldflags, extra), " ")}
	if v.systemJemalloc {
		args = append(args, "USE_SYSTEM_JEMALLOC=yes")
	}
	return args
}

func (p *plan) cacheKey() string {
	h := sha256.New()
	parts := []string{recipe, p.src.kind, p.src.sha256, p.tc.Path, p.tc.Version, p.spec.Allocator, p.allocLib}
	parts = append(parts, p.vars.args(p.tc, 0, nil)...)
	if p.spec.PGO != nil {
		parts = append(parts, "pgo", p.workload, p.training.String(), strconv.FormatBool(p.spec.PGO.BOLT))
		if p.spec.PGO.BOLT {
			parts = append(parts, p.boltTool.Path, p.boltTool.Version)
		}
	}
	for _, s := range parts {
		fmt.Fprintf(h, "%s\x00", s)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// build makes the binary in dir.tmp-PID and renames it to dir when done,
// so a cache entry is complete or absent.
func (p *plan) build(ctx context.Context, o Options, r *runner, dir string) (buildspec.Provenance, error) {
	tmp := fmt.Sprintf("%s.tmp-%d", dir, os.Getpid())
	// The key's lock is held: any other dir.tmp-* is a killed build's.
	if stale, _ := filepath.Glob(dir + ".tmp-*"); len(stale) > 0 {
		for _, s := range stale {
			os.RemoveAll(s)
		}
	}
	defer os.RemoveAll(tmp)
	failed := func(err error) (buildspec.Provenance, error) {
		// The failed build is kept whole, its logs and tree, until the
		// next attempt of the same key.
		os.RemoveAll(dir + ".failed")
		if os.Rename(tmp, dir+".failed") == nil {
			err = fmt.Errorf("%w; kept in %s", err, dir+".failed")
		}
		return buildspec.Provenance{}, fmt.Errorf("build: %w", err)
	}
	logs := filepath.Join(tmp, "logs")
	src := filepath.Join(tmp, "src")
	prov := p.provenance(filepath.Join(dir, "redis-server"))
	err := r.step(logs, "extract", func() error { return p.src.extract(ctx, r, src) })
	if err == nil && p.spec.PGO != nil {
		prov.Training, err = p.pgo(ctx, o, r, logs, src, tmp)
	} else if err == nil {
		err = r.step(logs, "build", func() error { return p.make(ctx, o, r, src, nil) })
	}
	if err == nil {
		err = p.finish(src, tmp, &prov)
	}
	if err != nil {
		return failed(err)
	}
	prov.Steps = r.steps
	for i := range prov.Steps { // the logs and the profile move with the directory
		prov.Steps[i].Log = strings.Replace(prov.Steps[i].Log, tmp, dir, 1)
	}
	if t := prov.Training; t != nil {
		t.Profile = strings.Replace(t.Profile, tmp, dir, 1)
		t.BOLTProfile = strings.Replace(t.BOLTProfile, tmp, dir, 1)
	}
	if err := writeProvenance(tmp, prov); err != nil {
		return buildspec.Provenance{}, err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if prev, perr := readProvenance(dir); perr == nil { // another build of the same key won
			prev.Cached = true
			return prev, nil
		}
		return buildspec.Provenance{}, fmt.Errorf("build: %w", err)
	}
	return prov, nil
}

func (p *plan) make(ctx context.Context, o Options, r *runner, src string, extra []string) error {
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	return r.run(ctx, filepath.Join(src, "src"), "make", p.vars.args(p.tc, jobs, extra)...)
}

// finish keeps the binary (mode 0755 in a 0755 directory), checks a
// linked-in allocator is in it, and drops the source tree.
func (p *plan) finish(src, tmp string, prov *buildspec.Provenance) error {
	out := filepath.Join(tmp, "redis-server")
	if err := os.Rename(filepath.Join(src, "src", "redis-server"), out); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	if err := os.Chmod(out, 0o755); err != nil {
		return err
	}
	if p.allocLib != "" {
		if err := checkLinked(out, p.allocLib); err != nil {
			return err
		}
		prov.Notes = append(prov.Notes, fmt.Sprintf("%s linked in (NEEDED before libc): %s", p.spec.Allocator, p.allocLib))
	}
	return os.RemoveAll(src)
}

func checkLinked(bin, lib string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("build: %s: %w", bin, err)
	}
	if !slices.Contains(libs, filepath.Base(lib)) {
		return fmt.Errorf("build: %s does not link %s (NEEDED: %s)", bin, filepath.Base(lib), strings.Join(libs, " "))
	}
	return nil
}

func (p *plan) provenance(binary string) buildspec.Provenance {
	return buildspec.Provenance{
		Binary: binary, Key: p.key, Source: p.src.path, SourceKind: p.src.kind,
		SourceVersion: p.src.version, SourceSHA256: p.src.sha256,
		Compiler: p.tc.Path, CompilerVersion: p.tc.Version,
		Make: p.vars.args(p.tc, 0, nil)[2:], Allocator: orDefault(p.spec.Allocator, "jemalloc"), LTO: p.spec.LTO,
	}
}

func readProvenance(dir string) (buildspec.Provenance, error) {
	var prov buildspec.Provenance
	b, err := os.ReadFile(filepath.Join(dir, "provenance.json"))
	if err != nil {
		return prov, err
	}
	if err := json.Unmarshal(b, &prov); err != nil {
		return prov, err
	}
	if _, err := os.Stat(prov.Binary); err != nil {
		return prov, errors.New("cached binary missing")
	}
	return prov, nil
}

func writeProvenance(dir string, prov buildspec.Provenance) error {
	b, err := json.MarshalIndent(prov, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "provenance.json"), append(b, '\n'), 0o644)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
