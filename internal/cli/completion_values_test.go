package cli

import (
	"context"
	"slices"
	"strings"
	"testing"

	"redline/internal/bench"
	"redline/internal/doctor"
	"redline/internal/tune"
)

// TestValueCompletion: completion offered no values for -t, --profile or
// --rule (issue 41). Each entry of valueCompletions names a flag its
// command has, and redline's own completion (__complete, what the bash,
// zsh and fish scripts call) offers the very list the command validates
// against: a list flag completes the value after the last comma.
func TestValueCompletion(t *testing.T) {
	root := newRoot(&streams{})
	for key := range valueCompletions {
		path, flag, _ := strings.Cut(key, " --")
		c, _, err := root.Find(strings.Fields(path))
		if err != nil || c.Flags().Lookup(flag) == nil {
			t.Errorf("%s: no such command or flag: the entry is stale", key)
		}
	}
	complete := func(args ...string) []string {
		out, errOut, code := runCLI(t, context.Background(), nil, append([]string{"__complete"}, args...)...)
		if code != 0 {
			t.Fatalf("__complete %q: exit %d %s", args, code, errOut)
		}
		var vals []string
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasPrefix(l, ":") {
				vals = append(vals, l)
			}
		}
		return vals
	}
	if got := complete("bench", "-t", "set,g"); !slices.Equal(got, []string{"set,get"}) {
		t.Errorf("bench -t set,g: %q", got)
	}
	if got := complete("bench", "-t", ""); !slices.Equal(got, bench.TestNames()) {
		t.Errorf("bench -t: %q, want %q", got, bench.TestNames())
	}
	if got := complete("tune", "plan", "--profile", "irq-local,"); len(got) != len(tune.ProfileNames()) || !strings.HasPrefix(got[0], "irq-local,") {
		t.Errorf("tune plan --profile irq-local,: %q", got)
	}
	var ids []string
	for _, r := range doctor.Rules() {
		ids = append(ids, r.ID)
	}
	if got := complete("doctor", "--rule", ""); !slices.Equal(got, ids) || len(ids) < 40 {
		t.Errorf("doctor --rule: %d values, want the %d rules", len(got), len(ids))
	}
	if got := complete("doctor", "--fail-on", ""); !slices.Equal(got, []string{"info", "low", "medium", "high", "never"}) {
		t.Errorf("doctor --fail-on: %q", got)
	}
	// every value offered is one the command takes
	for _, sev := range complete("doctor", "--min-severity", "") {
		if _, err := doctor.ParseSeverity(sev); err != nil {
			t.Errorf("--min-severity offers %q: %v", sev, err)
		}
	}
	if _, err := bench.SuiteTests(bench.TestNames(), false); err != nil {
		t.Errorf("-t offers a name -t refuses: %v", err)
	}
}
