package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"redline/internal/atomicfile"
)

// The man pages are generated from the command tree, so they say what
// --help says: "make install" runs "redline man DIR". (cobra/doc would need
// go-md2man, a module redline does not otherwise use.)
func init() { register(newManCmd) }

func newManCmd(s *streams) *cobra.Command {
	docdir := defaultDocDir
	cmd := &cobra.Command{
		Use:    "man DIR",
		Short:  "Write a man page (section 1) for every command into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := writeManPages(cmd.Root(), args[0], docdir)
			if err != nil {
				return exitCode(ExitFailure, "redline man: "+err.Error())
			}
			fmt.Fprintf(s.err, "redline man: wrote %d pages into %s\n", n, args[0])
			return nil
		},
	}
	cmd.Flags().StringVar(&docdir, "docdir", docdir, "where the documentation (docs/*.md) is installed: the pages point there, never at the source tree's docs/")
	return cmd
}

// defaultDocDir is where make install puts docs/*.md (PREFIX /usr/local).
const defaultDocDir = "/usr/local/share/doc/redline"

// writeManPages writes redline.1, redline-bench.1, redline-tune-apply.1 ...
// for every command that is not hidden.
func writeManPages(root *cobra.Command, dir, docdir string) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	n := 0
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		if c.Hidden || c.Name() == "help" {
			return nil
		}
		name := manName(c)
		if err := atomicfile.Write(filepath.Join(dir, name+".1"), manPage(c, docdir), 0o644); err != nil {
			return err
		}
		n++
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	return n, walk(root)
}

func manName(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }

// manPage renders one command as roff (man(7) macros): its --help (name,
// synopsis, description, options) and, from manTable and its flags,
// EXAMPLES, EXIT STATUS, ENVIRONMENT and FILES. A pointer to the source
// tree's docs/ is rewritten to docdir, where make install puts them.
func manPage(c *cobra.Command, docdir string) []byte {
	var b bytes.Buffer
	date := time.Now().UTC().Format("2006-01-02")
	if epoch := os.Getenv("SOURCE_DATE_EPOCH"); epoch != "" { // reproducible builds
		var sec int64
		fmt.Sscan(epoch, &sec)
		date = time.Unix(sec, 0).UTC().Format("2006-01-02")
	}
	text := func(s string) string { return roff(manDocRef(s, docdir)) }
	fmt.Fprintf(&b, ".TH %s 1 %q %q \"redline manual\"\n", strings.ToUpper(manName(c)), date, "redline "+Version())
	// Left-adjusted: long flag lists and paths leave lines that justified
	// text cannot fill ("cannot adjust line").
	b.WriteString(".ad l\n.nh\n")
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", manName(c), text(c.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n", text(c.UseLine()))
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	fmt.Fprintf(&b, ".SH DESCRIPTION\n.nf\n%s\n.fi\n", text(desc))
	manFlags(&b, "OPTIONS", c.NonInheritedFlags(), docdir)
	if ex := manExamples(c); ex != "" {
		fmt.Fprintf(&b, ".SH EXAMPLES\n.nf\n%s\n.fi\n", text(ex))
	}
	manTagged(&b, "EXIT STATUS", manExit(c), docdir)
	manTagged(&b, "ENVIRONMENT", manEnvironment(c), docdir)
	manTagged(&b, "FILES", manFiles(c, docdir), docdir)
	var see []string
	if c.HasParent() {
		see = append(see, manName(c.Parent())+"(1)")
	}
	for _, sub := range c.Commands() {
		if !sub.Hidden && sub.Name() != "help" {
			see = append(see, manName(sub)+"(1)")
		}
	}
	if len(see) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", strings.Join(see, ", "))
	}
	return b.Bytes()
}

// manTagged writes a section of tagged paragraphs: a term, then its text.
func manTagged(b *bytes.Buffer, title string, items [][2]string, docdir string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, ".SH %s\n", title)
	for _, it := range items {
		fmt.Fprintf(b, ".TP\n.B %s\n%s\n", breakable(roff(it[0])), breakable(roff(manDocRef(it[1], docdir))))
	}
}

func manFlags(b *bytes.Buffer, title string, fs *pflag.FlagSet, docdir string) {
	first := true
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		if first {
			fmt.Fprintf(b, ".SH %s\n", title)
			first = false
		}
		varname, usage := pflag.UnquoteUsage(f)
		spec := "\\-\\-" + f.Name
		if f.Shorthand != "" {
			spec = "\\-" + f.Shorthand + ", " + spec
		}
		if varname != "" {
			spec += " " + varname
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" && f.DefValue != "[]" {
			usage += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(b, ".TP\n.B %s\n%s\n", spec, breakable(roff(manDocRef(usage, docdir))))
	})
}

// roff escapes text for man(7): backslashes, and lines that would start
// with a control character.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// breakable lets troff break filled text inside a long word (a list such
// as ping_inline,ping,...,xadd, a long path): after each comma, slash or
// equals sign of a word over breakableLen characters. Without a break
// point troff cannot fit the line and warns ("can't break line").
func breakable(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		words := strings.Split(l, " ")
		for j, w := range words {
			if len([]rune(w)) <= breakableLen || strings.HasPrefix(w, ".") {
				continue
			}
			var b strings.Builder
			rs := []rune(w)
			for k, r := range rs {
				b.WriteRune(r)
				if (r == ',' || r == '/' || r == '=') && k+1 < len(rs) {
					b.WriteString(`\:`)
				}
			}
			words[j] = b.String()
		}
		lines[i] = strings.Join(words, " ")
	}
	return strings.Join(lines, "\n")
}

// breakableLen is the longest word breakable leaves whole.
const breakableLen = 30
