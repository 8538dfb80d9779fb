package bench

import (
	"time"

	"redline/internal/benchdata"
)

// Unmeasured is the Summary of test t stopped before it measured
// anything (while the server's INFO was read, the workers started or the
// connections were made): no request, marked interrupted, with the
// configuration it was run with and during naming what it was doing
// (benchdata.Summary.StoppedDuring). A stopped run prints and saves it
// like any partial result, so even a stop in its first tenths of a
// second leaves a report and an -o file that say so (issue 40).
func Unmeasured(o Options, t Test, during string) *benchdata.Summary {
	r := &runner{o: &o, test: t, target: o.Addr}
	now := time.Now()
	s := &benchdata.Summary{
		Schema: benchdata.SchemaVersion, Title: t.Title, Command: r.commandText(), Config: r.runConfig(),
		Start: now, End: now, Interrupted: true, StoppedDuring: during,
		Histogram: benchdata.NewHistogram(o.Precision), // no Connections: none were counted
	}
	digest(s)
	return s
}
