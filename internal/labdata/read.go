package labdata

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"redline/internal/stats"
)

// Readable reports whether schema is a lab results layout this version
// reads.
func Readable(schema string) bool {
	return schema == ResultSchema || schema == ResultSchemaV2 || schema == ResultSchemaV1
}

// Upgrade brings a result decoded from an older layout up to the current
// one in memory (its Schema still says what the file was). A v1 file's
// verdicts were written before the minimum-runs rule was recorded: they
// are judged again from the recorded run counts and interval with
// stats.Judge, so every output tells the same story.
func Upgrade(r *Result) {
	if r.Schema != ResultSchemaV1 {
		return
	}
	for i := range r.Comparisons {
		c := &r.Comparisons[i]
		c.HasCI = c.CILow != 0 || c.CIHigh != 0
		o := stats.Judge(c.N, c.BaselineN, c.CILow, c.CIHigh, c.HigherIsBetter)
		if o == stats.TooFew || !c.HasCI {
			c.CILow, c.CIHigh, c.HasCI = 0, 0, false
			o = stats.TooFew
			if c.N >= stats.MinRuns && c.BaselineN >= stats.MinRuns {
				o = stats.Unclear // enough runs, but no interval was recorded
			}
		}
		c.Verdict = stats.LabWords.Verdict(o)
	}
}

// ReadResult reads a results file of any readable layout, upgraded.
func ReadResult(path string) (*Result, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: not a redline lab result: %w", filepath.Base(path), err)
	}
	if !Readable(r.Schema) {
		return nil, fmt.Errorf("%s: schema %q, want %q", path, r.Schema, ResultSchema)
	}
	Upgrade(&r)
	return &r, nil
}
