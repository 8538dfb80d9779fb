package report

import (
	"slices"
	"strings"
	"testing"
)

// A report of one bench file is one run: no "with 1 comparisons" note
// (issue 41).
func TestOneRunIsReportedAsOneRun(t *testing.T) {
	r := &Report{Runs: []*Sample{{}}}
	r.noteFewRuns()
	if !slices.Contains(r.Notes, OneRunNote) || slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "comparisons") }) {
		t.Errorf("notes %q, want the one-run note only", r.Notes)
	}
}
