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
)

// pgo is profile-guided optimisation as one step: an instrumented build,
// the training run against it, the profile merged (llvm-profdata for
// clang; gcc's .gcda files are the profile), and the optimised build in
// the same directory (gcc finds a .gcda by its object's path).
func (p *plan) pgo(ctx context.Context, o Options, r *runner, logs, src, tmp string) (*buildspec.Training, error) {
	if o.Train == nil {
		o.Train = BenchTraining
	}
	prof := filepath.Join(tmp, "profile")
	if err := os.MkdirAll(prof, 0o755); err != nil {
		return nil, err
	}
	t := &buildspec.Training{Workload: p.workload, Duration: p.training.String(), Profile: prof}
	err := r.step(logs, "instrumented-build", func() error { return p.make(ctx, o, r, src, p.tc.profileFlags(prof, "")) })
	if err == nil {
		err = r.step(logs, "train", func() error { return p.train(ctx, o, src, prof) })
	}
	use := prof
	if err == nil {
		err = r.step(logs, "merge", func() error {
			use, t.Functions, err = p.mergeProfile(ctx, r, prof)
			return err
		})
	}
	if err == nil {
		err = r.step(logs, "optimised-build", func() error { return p.make(ctx, o, r, src, p.tc.profileFlags(prof, use)) })
	}
	if err != nil {
		return nil, err
	}
	t.Profile = use
	t.MissingWarnings = countMissingProfile(filepath.Join(logs, "optimised-build.log"))
	if p.spec.PGO.BOLT {
		if err := p.bolt(ctx, o, r, logs, src, tmp, prof, t); err != nil {
			return nil, err
		}
	}
	return t, nil
}

func (p *plan) train(ctx context.Context, o Options, src, prof string) error {
	var env []string
	if p.tc.Family == "clang" {
		env = append(env, "LLVM_PROFILE_FILE="+filepath.Join(prof, "redis-%p-%m.profraw"))
	}
	return p.trainBinary(ctx, o, filepath.Join(src, "src", "redis-server"), env, prof)
}

// trainBinary runs the training workload against an instrumented bin,
// which writes its profile into prof as it exits.
func (p *plan) trainBinary(ctx context.Context, o Options, bin string, env []string, prof string) error {
	back, err := lendProfileDir(prof)
	if err != nil {
		return err
	}
	err = o.Train(ctx, Training{Binary: bin, Env: env, Workload: p.workload, Duration: p.training})
	if berr := back(); err == nil {
		err = berr
	}
	if err != nil {
		return fmt.Errorf("pgo training (%s): %w", p.workload, err)
	}
	return nil
}

// mergeProfile returns the profile the optimised build uses and how many
// functions (clang) or objects (gcc) it has counts for.
func (p *plan) mergeProfile(ctx context.Context, r *runner, prof string) (string, int, error) {
	if p.tc.Family == "gcc" {
		gcda, _ := filepath.Glob(filepath.Join(prof, "*.gcda"))
		if len(gcda) == 0 {
			return "", 0, fmt.Errorf("pgo: the training run left no .gcda in %s (did the server exit cleanly?)", prof)
		}
		return prof, len(gcda), nil
	}
	raw, _ := filepath.Glob(filepath.Join(prof, "*.profraw"))
	if len(raw) == 0 {
		return "", 0, fmt.Errorf("pgo: the training run left no .profraw in %s (did the server exit cleanly?)", prof)
	}
	tool, err := p.tc.Tool("llvm-profdata")
	if err != nil {
		return "", 0, err
	}
	out := filepath.Join(prof, "redis.profdata")
	if err := r.run(ctx, "", tool, append([]string{"merge", "-o", out}, raw...)...); err != nil {
		return "", 0, err
	}
	show, err := exec.CommandContext(ctx, tool, "show", out).Output()
	if err != nil {
		return "", 0, fmt.Errorf("llvm-profdata show: %w", err)
	}
	fmt.Fprintf(r.log, "%s", show)
	return out, profFunctions(string(show)), nil
}

var totalFunctions = regexp.MustCompile(`Total functions: (\d+)`)

func profFunctions(show string) int {
	m := totalFunctions.FindStringSubmatch(show)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// countMissingProfile counts a build log's warnings that a profile was
// missing or did not match: none means the profile covered what was built.
func countMissingProfile(log string) int {
	f, err := os.Open(log)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, "warning:") && (strings.Contains(l, "missing-profile") || strings.Contains(l, "profile-instr") ||
			strings.Contains(l, "profile count data file not found")) {
			n++
		}
	}
	return n
}
