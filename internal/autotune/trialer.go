package autotune

import (
	"context"

	"redline/internal/profiledata"
)

// Trialer is the host side of a search: Trial applies c to the target
// (scoped: every change journaled so a crash leaves it restorable), runs
// one measurement of the objective, rolls c back and returns what it
// measured. The baseline is the empty Config. The simulations drive a
// simulated host through it; the real target is internal/target's
// Target.
type Trialer interface {
	Trial(ctx context.Context, c Config, o TrialOptions) (Measurement, error)
}

// TrialOptions say what a trial measures besides the objective.
type TrialOptions struct {
	// Breakdown asks for where the server's time went during the run
	// (the confirmation asks once for the baseline and once for the
	// final plan).
	Breakdown bool
}

// Measurement is one run of the objective.
type Measurement struct {
	// Value is the objective: requests/s, or the p99 of a latency
	// objective (Options.LowerIsBetter).
	Value float64 `json:"value"`
	// P99 is the run's p99 latency, in the unit of Options.P99Max (0 when
	// the trialer does not measure it; a bounded session needs it).
	P99 float64 `json:"p99,omitempty"`
	// Breakdown is set when TrialOptions asked for it and the host could
	// sample the server (nil otherwise: the report says so).
	Breakdown *profiledata.Breakdown `json:"breakdown,omitempty"`
	// Commands is the server's time by command during the run (INFO
	// commandstats after less before), busiest first; with Breakdown.
	Commands []CommandTime `json:"commands,omitempty"`
}

// CommandTime is one command's calls and the server's time in it over a
// run.
type CommandTime struct {
	Command string `json:"command"`
	Calls   int64  `json:"calls"`
	Usec    int64  `json:"usec"`
}

// TrialerFunc adapts a function to Trialer.
type TrialerFunc func(ctx context.Context, c Config, o TrialOptions) (Measurement, error)

// Trial calls f.
func (f TrialerFunc) Trial(ctx context.Context, c Config, o TrialOptions) (Measurement, error) {
	return f(ctx, c, o)
}
