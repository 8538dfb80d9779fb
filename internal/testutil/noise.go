package testutil

import (
	"math/rand/v2"
	"os"
)

// The simulated machines of the statistics' simulations (internal/stats'
// lab simulations, internal/autotune's sessions): how one run's
// throughput varies, and what a whole round of runs shares. Each shape is
// one the lab meets on real hosts (docs/lab.md, Statistics).

// Noise draws one run's throughput factor, per machine: a quiet machine
// (3% run-to-run); a bimodal one (client and server on the same CPU in
// some runs: 117k or 147k rps); a busy one (now and then a run loses most
// of its CPU to other work).
var Noise = map[string]func(r *rand.Rand) float64{
	"quiet": func(r *rand.Rand) float64 { return 1 + 0.03*r.NormFloat64() },
	"bimodal": func(r *rand.Rand) float64 {
		if r.Float64() < 0.4 {
			return 117 * (1 + 0.02*r.NormFloat64())
		}
		return 147 * (1 + 0.02*r.NormFloat64())
	},
	"busy": func(r *rand.Rand) float64 {
		if r.Float64() < 0.2 {
			return 0.3 + 0.5*r.Float64()
		}
		return 1 + 0.05*r.NormFloat64()
	},
}

// Drifting draws a round's shared factor on a machine whose load changes
// between rounds: a third of the rounds lose 10-60% to other work, on top
// of each run's own noise.
func Drifting(r *rand.Rand) float64 {
	if r.Float64() < 1.0/3 {
		return 0.4 + 0.5*r.Float64()
	}
	return 1
}

// NoiseModels are the four machines the simulations run on, in order:
// quiet, bimodal, busy, and "drifting busy" (busy runs in drifting
// rounds). Round is nil when rounds share nothing.
func NoiseModels() []NoiseModel {
	return []NoiseModel{
		{Name: "quiet", Run: Noise["quiet"]},
		{Name: "bimodal", Run: Noise["bimodal"]},
		{Name: "busy", Run: Noise["busy"]},
		{Name: "drifting busy", Run: Noise["busy"], Round: Drifting},
	}
}

// NoiseModel is one simulated machine.
type NoiseModel struct {
	Name  string
	Run   func(r *rand.Rand) float64
	Round func(r *rand.Rand) float64
}

// SimHeavyEnv runs the long versions of the simulations.
const SimHeavyEnv = "REDLINE_SIM_HEAVY"

// SimHeavy reports whether the long simulations should run
// (REDLINE_SIM_HEAVY=1): they take minutes, the short ones seconds.
func SimHeavy() bool { return os.Getenv(SimHeavyEnv) == "1" }
