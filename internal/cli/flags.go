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
