package redisbuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"redline/internal/buildspec"
	"redline/internal/trusted"
)

// runner executes a build's commands (never through a shell), each
// step's output in a log of its own, and times the steps.
type runner struct {
	cache    string
	log      io.Writer // the current step's log
	logPath  string
	progress io.Writer // one line per step, when set
	steps    []buildspec.Step
}

// buildEnv is the environment of make and the compiler: an allow-list
// (buildVariables) of the caller's, never what the caller's environment
// happens to hold. make, the shell it runs recipes with, the compiler
// driver, the linker, ccache and configure scripts each take programs,
// makefiles, libraries or output paths from variables of their own
// ($MAKEFILES, $GCC_EXEC_PREFIX, $CONFIG_SITE, $BASH_ENV, $TMPDIR,
// $CCACHE_*, ...); a deny-list missed some, and a root build with a
// user's environment (sudo -E, a root shell that kept it) ran them as
// root. None is part of a build's cache key either.
//
// As root its PATH is root's system directories (trusted.Dirs): make's
// recipes and the compiler driver look up cc, ar, as, ld and sh by name,
// and a user's directory on root's PATH would have them run as root.
func buildEnv() []string {
	var env []string
	root := os.Geteuid() == 0
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if buildVariables[k] && !(k == "PATH" && root) {
			env = append(env, kv)
		}
	}
	if root {
		env = append(env, "PATH="+strings.Join(trusted.Dirs, ":"))
	}
	return append(env, "LC_ALL=C")
}

// buildVariables are the caller's variables a build keeps: where to find
// programs (a non-root caller's PATH) and who it runs as.
var buildVariables = map[string]bool{"PATH": true, "HOME": true, "USER": true, "LOGNAME": true}

func (r *runner) run(ctx context.Context, dir, name string, args ...string) error {
	p, err := trusted.Program(name)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	cmd := exec.CommandContext(ctx, p, args...)
	cmd.Dir, cmd.Env = dir, buildEnv()
	w := r.log
	if w == nil {
		w = io.Discard
	}
	fmt.Fprintf(w, "$ %s %s\n", name, strings.Join(args, " "))
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w (log: %s)", name, firstWord(args), err, r.logPath)
	}
	return nil
}

// firstWord is what a command was asked to do: its first argument that is
// not an option ("source" of apt-get -o X -q source redis).
func firstWord(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-o":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// step runs fn with its output in logDir/name.log and records its time.
func (r *runner) step(logDir, name string, fn func() error) error {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	p := filepath.Join(logDir, name+".log")
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	defer f.Close()
	r.log, r.logPath = f, p
	defer func() { r.log, r.logPath = nil, "" }()
	if r.progress != nil {
		fmt.Fprintf(r.progress, "build: %s ...\n", name)
	}
	start := time.Now()
	err = fn()
	secs := time.Since(start).Seconds()
	r.steps = append(r.steps, buildspec.Step{Name: name, Seconds: secs, Log: p})
	if r.progress != nil && err == nil {
		fmt.Fprintf(r.progress, "build: %s done in %.1fs\n", name, secs)
	}
	return err
}
