package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// renamedTo marks a flag kept under an old name: hidden from help, and a
// note on stderr when used, so scripts keep working while users learn the
// name every command shares (see the table in docs and the README).
const renamedTo = "redline-renamed-to"

// renamed hides fs's flag old and notes that it is now spelled new.
func renamed(fs *pflag.FlagSet, old, new string) {
	fs.SetAnnotation(old, renamedTo, []string{new})
	fs.MarkHidden(old)
}

// alias defines old as a hidden second name of the flag new (defined
// first), sharing its value.
func alias(fs *pflag.FlagSet, old, new string) {
	f := fs.Lookup(new)
	fs.Var(f.Value, old, f.Usage)
	fs.Lookup(old).NoOptDefVal = f.NoOptDefVal // a bool stays a bool
	renamed(fs, old, new)
}

// aliasShort keeps the shorthand -short of a flag that lost it: a hidden
// flag sharing new's value, noted like a renamed flag.
func aliasShort(fs *pflag.FlagSet, short, new string) {
	f := fs.Lookup(new)
	name := "shorthand-" + short
	fs.VarP(f.Value, name, short, f.Usage)
	fs.Lookup(name).NoOptDefVal = f.NoOptDefVal
	renamed(fs, name, new)
}

// noteRenamed prints, on stderr, a note for each old flag name cmd was
// given. cobra's own deprecation notes go to stdout, among the results.
func noteRenamed(s *streams, cmd *cobra.Command) {
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if to := f.Annotations[renamedTo]; len(to) == 1 {
			old := "--" + f.Name
			if short, ok := strings.CutPrefix(f.Name, "shorthand-"); ok {
				old = "-" + short
			}
			fmt.Fprintf(s.err, "redline %s: %s is now --%s (the old name still works)\n", cmd.Name(), old, to[0])
		}
	})
}

// progressModes are --progress's values (bench and lab).
var progressModes = []string{"auto", "tty", "plain", "none"}

// checkProgress is a usage error of command cmd unless mode is a
// --progress value.
func checkProgress(cmd, mode string) error {
	if !slices.Contains(progressModes, mode) {
		return usageError("redline %s: --progress %q: want auto, tty, plain or none", cmd, mode)
	}
	return nil
}

// withSuggestion adds "did you mean --NAME?" to pflag's unknown-flag error
// when c has a visible flag spelled close to the unknown one (at most two
// edits, or a prefix of it): cobra suggests mistyped commands, not flags.
// A single-dash word ("-thread") is matched as the long name it resembles.
func withSuggestion(c *cobra.Command, err error) string {
	msg := err.Error()
	var typed string
	if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
		typed = name
	} else if _, arg, ok := strings.Cut(msg, "' in -"); ok && strings.HasPrefix(msg, "unknown shorthand flag: '") {
		typed = arg
	}
	if typed == "" {
		return msg
	}
	if s := closestFlags(c.Flags(), typed); len(s) > 0 {
		return msg + "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return msg
}

// closestFlags is fs's visible flags nearest to typed, as "--name"; for
// one letter, the shorthand in the other case ("-Q": "-q").
func closestFlags(fs *pflag.FlagSet, typed string) []string {
	best, out := 3, []string(nil)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if len(typed) == 1 {
			if f.Shorthand != "" && f.Shorthand != typed && strings.EqualFold(f.Shorthand, typed) {
				out = append(out, "-"+f.Shorthand)
			}
			return
		}
		d := editDistance(typed, f.Name)
		if len(typed) >= 3 && strings.HasPrefix(f.Name, typed) {
			d = min(d, 1)
		}
		switch {
		case d > 2:
		case d < best:
			best, out = d, []string{"--" + f.Name}
		case d == best:
			out = append(out, "--"+f.Name)
		}
	})
	if len(out) > 3 {
		out = out[:3]
	}
	return out
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// oneLine folds cobra's multi-line "Did you mean this?" list of commands
// into the sentence, so every refusal is one line.
func oneLine(msg string) string {
	head, list, ok := strings.Cut(msg, "\n\nDid you mean this?\n")
	if !ok {
		return msg
	}
	return head + "; did you mean " + strings.Join(strings.Fields(list), " or ") + "?"
}
