package redisbuild

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"redline/internal/buildspec"
	"redline/internal/trusted"
)

// BOLT, after PGO: llvm-bolt rewrites the optimised binary's layout from a
// profile of its own. The profile comes from BOLT's instrumentation (a
// training run of an instrumented copy), not from perf: a VM's perf has
// no branch records (LBR) and often no hardware events at all. BOLT needs
// the binary's relocations, so a BOLT build links with -Wl,--emit-relocs.

// boltOptimise are BOLT's usual optimisations (its README's): blocks laid out
// by ext-TSP, functions by HFSort, cold parts split off, stats in the log.
var boltOptimise = []string{"-reorder-blocks=ext-tsp", "-reorder-functions=hfsort", "-split-functions",
	"-split-all-cold", "-split-eh", "-dyno-stats"}

// Bolt is an llvm-bolt found on this machine.
type Bolt struct {
	Path    string
	Version string // the line of --version that names LLVM's
}

// FindBolt finds llvm-bolt: by that name, else the newest llvm-bolt-N on
// PATH (Debian names its packages' tools so: bolt-16 installs
// llvm-bolt-16).
func FindBolt(ctx context.Context) (Bolt, error) {
	p, err := trusted.Program("llvm-bolt")
	if err != nil {
		p = newestVersioned("llvm-bolt")
	}
	if p == "" {
		return Bolt{}, SpecError{fmt.Errorf("build: pgo.bolt: llvm-bolt not found (apt-get install -y bolt-16)")}
	}
	// llvm-bolt finds its instrumentation runtime from the path it runs
	// as (../lib beside its bin): Debian's llvm-bolt-16 is a link into
	// /usr/lib/llvm-16/bin, whose lib has the runtime.
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	out, _ := exec.CommandContext(ctx, p, "--version").Output()
	v := ""
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "LLVM version") {
			v = strings.TrimSpace(l)
		}
	}
	return Bolt{Path: p, Version: v}, nil
}

// newestVersioned is the name-N on PATH (as root, in root's system
// directories, trusted.Dirs) with the highest N.
func newestVersioned(name string) string {
	best, bestN := "", -1
	dirs := filepath.SplitList(os.Getenv("PATH"))
	if os.Geteuid() == 0 {
		dirs = trusted.Dirs
	}
	for _, dir := range dirs {
		m, _ := filepath.Glob(filepath.Join(dir, name+"-[0-9]*"))
		for _, p := range m {
			n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), name+"-"))
			if err == nil && n > bestN {
				if _, err := trusted.Program(p); err == nil {
					best, bestN = p, n
				}
			}
		}
	}
	return best
}

// bolt instruments the optimised binary, trains the instrumented copy
// with the PGO workload, and rewrites the binary with that profile, in
// place (finish keeps it).
func (p *plan) bolt(ctx context.Context, o Options, r *runner, logs, src, tmp, profDir string, t *buildspec.Training) error {
	bin := filepath.Join(src, "src", "redis-server")
	dir := filepath.Join(tmp, "bolt")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	prof := filepath.Join(profDir, "bolt.fdata")
	inst := filepath.Join(dir, "redis-server") // its name keeps Redis's server mode
	err := r.step(logs, "bolt-instrument", func() error {
		return r.run(ctx, "", p.boltTool.Path, bin, "-instrument", "-instrumentation-file="+prof,
			// where the runtime reads its own binary: the server's user
			// may not read /proc/self/map_files
			"-instrumentation-binpath="+inst, "-o", inst)
	})
	if err == nil {
		err = os.Chmod(inst, 0o755) // llvm-bolt writes 0777; as root, only what nobody else can write runs
	}
	if err == nil {
		err = r.step(logs, "bolt-train", func() error { return p.trainBinary(ctx, o, inst, nil, profDir) })
	}
	if err == nil {
		if _, serr := os.Stat(prof); serr != nil {
			err = fmt.Errorf("bolt: the instrumented server left no profile %s (did it exit cleanly?)", prof)
		}
	}
	out := filepath.Join(dir, "redis-server.bolt")
	if err == nil {
		err = r.step(logs, "bolt-optimise", func() error {
			return r.run(ctx, "", p.boltTool.Path, append([]string{bin, "-o", out, "-data=" + prof}, boltOptimise...)...)
		})
	}
	if err != nil {
		return err
	}
	t.BOLT, t.BOLTProfile = true, prof
	t.BOLTFunctions = boltProfiled(filepath.Join(logs, "bolt-optimise.log"))
	if err := os.Rename(out, bin); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// boltProfiled reads llvm-bolt's "BOLT-INFO: N out of M functions in the
// binary (P%) have non-empty execution profile": N.
var boltProfiledLine = regexp.MustCompile(`BOLT-INFO: (\d+) out of \d+ functions in the binary .* have non-empty execution profile`)

func boltProfiled(log string) int {
	f, err := os.Open(log)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if m := boltProfiledLine.FindStringSubmatch(sc.Text()); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return 0
}

// boltFlags are the compile and link flags a BOLT build adds: BOLT
// rewrites a binary only with its relocations (--emit-relocs), and it is
// incompatible with gcc's hot/cold partitioning, on by default since gcc 8
// (its README): with it a BOLTed redis-server crashed in SET here. Both
// go to the link too, where gcc's LTO generates the code.
func boltFlags(tc Toolchain, s buildspec.Spec) (cflags, ldflags []string) {
	if s.PGO == nil || !s.PGO.BOLT {
		return nil, nil
	}
	if tc.Family == "gcc" {
		cflags = []string{"-fno-reorder-blocks-and-partition"}
	}
	return cflags, append(append([]string{}, cflags...), "-Wl,--emit-relocs")
}
