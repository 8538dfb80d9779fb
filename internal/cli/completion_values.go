package cli

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"redline/internal/bench"
	"redline/internal/doctor"
	"redline/internal/knobs"
	"redline/internal/report"
	"redline/internal/steer"
	"redline/internal/tune"
)

// valueCompletion is what shell completion offers for one flag's value:
// the list the command validates the value against (one list, read where
// it is kept, never a copy), and whether the flag takes several values
// separated by commas.
type valueCompletion struct {
	values func() []string
	list   bool
}

// valueCompletions are keyed by the command's path below redline and the
// flag's long name: "tune plan --profile". A flag added to a command with
// a fixed set of values gets completion by one entry here.
var valueCompletions = map[string]valueCompletion{
	"bench --tests":            {bench.TestNames, true},
	"bench --progress":         {func() []string { return progressModes }, false},
	"lab --progress":           {func() []string { return progressModes }, false},
	"tune plan --profile":      {tune.ProfileNames, true},
	"tune plan --min-severity": {severityNames, false},
	"doctor --rule":            {ruleIDs, true},
	"doctor --min-severity":    {severityNames, false},
	"doctor --fail-on":         {func() []string { return append(severityNames(), "never") }, false},
	"autotune --knob":          {knobNames, false},
	"report --format":          {reportFormats, false},
	"steer --domain":           {func() []string { return []string{steer.DomainNode, steer.DomainLLC} }, false},
}

// severityNames are the names doctor.ParseSeverity reads.
func severityNames() []string {
	var out []string
	for s := doctor.Info; s <= doctor.High; s++ {
		out = append(out, s.String())
	}
	return out
}

// ruleIDs are the registered doctor rules' IDs.
func ruleIDs() []string {
	var out []string
	for _, r := range doctor.Rules() {
		out = append(out, r.ID)
	}
	return out
}

func knobNames() []string {
	var out []string
	for _, k := range knobs.Catalog() {
		out = append(out, k.Name)
	}
	return out
}

func reportFormats() []string {
	var out []string
	for _, f := range report.Formats {
		out = append(out, string(f))
	}
	return out
}

// addValueCompletions registers valueCompletions on root's commands.
func addValueCompletions(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		c.Flags().VisitAll(func(f *pflag.Flag) {
			vc, ok := valueCompletions[path+" --"+f.Name]
			if !ok {
				return
			}
			_ = c.RegisterFlagCompletionFunc(f.Name, func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
				return completeValue(vc, toComplete)
			})
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeValue offers the values that start with what was typed; for a
// list flag, after the last comma, each offered whole ("set,g" offers
// "set,get") and without a space after it, so another may follow.
func completeValue(vc valueCompletion, typed string) ([]string, cobra.ShellCompDirective) {
	prefix, last := "", typed
	if vc.list {
		if i := strings.LastIndexByte(typed, ','); i >= 0 {
			prefix, last = typed[:i+1], typed[i+1:]
		}
	}
	var out []string
	for _, v := range vc.values() {
		if strings.HasPrefix(v, last) {
			out = append(out, prefix+v)
		}
	}
	d := cobra.ShellCompDirectiveNoFileComp
	if vc.list {
		d |= cobra.ShellCompDirectiveNoSpace
	}
	return out, d
}
