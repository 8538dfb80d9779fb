// Package cli maps redline's command lines onto the library packages. It is
// the only package that parses flags, prints to the terminal or decides exit
// codes; every command lives in its own file and registers itself here.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"redline/internal/secret"
	"redline/internal/textsafe"
)

// Exit codes, in one place. Commands return errors; Main turns them into codes.
const (
	ExitOK       = 0 // success, nothing to report
	ExitFailure  = 1 // the command ran and failed (or, for doctor, found problems)
	ExitError    = 2 // the command could not run: bad input, unreadable state
	ExitSignaled = 130
)

// exitError carries a specific exit code and an optional message through
// cobra's error return. An empty message means the command already printed
// what the user needs to know.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// exitCode returns an error that makes Main exit with code and print msg
// (unless msg is empty) on stderr.
func exitCode(code int, msg string) error { return &exitError{code: code, msg: msg} }

// usageError is a bad-input error: printed, exit ExitError (2) in every
// command.
func usageError(format string, args ...any) error {
	return &exitError{code: ExitError, msg: fmt.Sprintf(format, args...)}
}

// streams bundles the command's I/O so tests can capture it.
type streams struct {
	in       io.Reader
	out, err io.Writer
	argv     []string // the command line, passwords redacted, for results' provenance
	started  bool     // the command's flags and arguments were accepted
}

// commandFactory builds one top-level command.
type commandFactory func(*streams) *cobra.Command

var factories []commandFactory

// register adds a top-level command; each command file calls it from init.
func register(f commandFactory) { factories = append(factories, f) }

// newRoot builds the command tree around the given streams.
func newRoot(s *streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "redline",
		Short: "Measure, diagnose, tune reversibly and prove Redis performance on Linux",
		Long: `redline measures a Redis server (bench), models its host (inspect), finds
problems (doctor), applies journaled, reversible fixes (tune) and runs the whole
before/after experiment with repeated measurements and a report (lab).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version(),
	}
	root.SetIn(s.in)
	root.SetOut(s.out)
	root.SetErr(s.err)
	// bench keeps redis-benchmark's -h HOST, so help is long-form only
	// everywhere (cobra would otherwise panic on the duplicate shorthand).
	root.PersistentFlags().Bool("help", false, "help for this command")
	root.SetVersionTemplate(versionText())
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		s.started = true
		noteRenamed(s, cmd)
	}
	// A flag error is a usage error in every command: exit 2, in one
	// place. -h where it is not a flag (everywhere but bench) is help.
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usageError("%s: %s (see %s --help)", c.CommandPath(), parseWords(withSuggestion(c, err)), c.CommandPath())
	})
	for _, f := range factories {
		root.AddCommand(f(s))
	}
	addValueCompletions(root)
	return root
}

// strconvWords is pflag's parse error of a number, in Go's words.
var strconvWords = regexp.MustCompile(`: strconv\.Parse\w+: parsing "[^"]*": (invalid syntax|value out of range)`)

// parseWords says a flag's bad number in the user's words: "-p abc" is
// not a number, not a strconv.ParseInt error.
func parseWords(msg string) string {
	return strconvWords.ReplaceAllStringFunc(msg, func(m string) string {
		if strings.HasSuffix(m, "value out of range") {
			return ": out of range"
		}
		return ": not a number"
	})
}

// unknownSubcommand words "redline tune aply": cobra suggests only for the
// top level and points at redline --help; this names the command whose
// sub-command was mistyped, the nearest ones, and its help.
func unknownSubcommand(root *cobra.Command, args []string) (string, bool) {
	c, rest, err := root.Find(args)
	if err != nil || c == root || !c.HasSubCommands() || len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		return "", false
	}
	msg := fmt.Sprintf("%s: unknown command %q", c.CommandPath(), rest[0])
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2 // cobra's default, set only where it suggests itself
	}
	if sug := c.SuggestionsFor(rest[0]); len(sug) > 0 {
		msg += "; did you mean " + strings.Join(sug, " or ") + "?"
	}
	return msg + " (see " + c.CommandPath() + " --help)", true
}

// Main runs redline with args and returns the process exit code.
func Main(args []string) int {
	// Writes to a closed stdout return EPIPE (run's closedOutput acts on it)
	// instead of killing the process. A full channel drops signals, so this
	// one is never read.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	return run(context.Background(), args, &streams{in: os.Stdin, out: os.Stdout, err: os.Stderr})
}

func run(ctx context.Context, args []string, s *streams) int {
	s.argv = secret.Redact(append([]string{"redline"}, args...))
	ctx, stop := stopOnSignals(ctx, func(msg string) { fmt.Fprintln(s.err, msg) })
	defer stop(nil)
	s.out, s.err = watchOutput(s.out, stop), watchOutput(s.err, stop)
	root := newRoot(s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	code := exitFor(err, s, root, args)
	// A stopped run exits 128+signal (141 for a closed output) whatever
	// its last step returned: a connect cut short by the stop, a command
	// that had finished its work, a save that failed (its message says so).
	if (code != ExitOK && ctx.Err() != nil) || signalled(ctx) {
		return stoppedCode(ctx)
	}
	return code
}

// exitFor prints err (if it has a message) and returns its exit code;
// root and args word a mistyped sub-command.
func exitFor(err error, s *streams, root *cobra.Command, args []string) int {
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(s.err, textsafe.Printable(ee.msg))
		}
		return ee.code
	}
	if !s.started { // cobra refused the command line: unknown command, wrong arguments
		if msg, ok := unknownSubcommand(root, args); ok {
			fmt.Fprintln(s.err, textsafe.Printable(msg))
			return ExitError
		}
		fmt.Fprintf(s.err, "redline: %s (see redline --help)\n", textsafe.Printable(oneLine(err.Error())))
		return ExitError
	}
	// An error may carry a server's or a file's text (an error reply,
	// a value): its controls are escaped, as every renderer does.
	fmt.Fprintln(s.err, "redline:", textsafe.Printable(err.Error()))
	return ExitFailure
}
