package autotune

import "context"

// Trialer is the host side of a search: Trial applies c to the target
// (scoped: every change journaled so a crash leaves it restorable), runs
// one measurement of the objective, rolls c back and returns the
// measured value. The baseline is the empty Config. The simulations drive
// a simulated host through it; the real target is driven through an
// adapter in internal/cli.
type Trialer interface {
	Trial(ctx context.Context, c Config) (float64, error)
}

// TrialerFunc adapts a function to Trialer.
type TrialerFunc func(ctx context.Context, c Config) (float64, error)

// Trial calls f.
func (f TrialerFunc) Trial(ctx context.Context, c Config) (float64, error) { return f(ctx, c) }
