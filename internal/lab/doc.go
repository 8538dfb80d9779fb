// Package lab runs redline's main job: a reproducible before/after
// experiment. It starts or reaches a server, diagnoses the host (through a
// Diagnoser), measures a baseline, applies tunings (through a Tuner) or
// server variants, re-measures them interleaved with repetitions, always
// rolls back, and writes a labdata.Result that the report package renders.
// The doctor and tune adapters live where they are wired, in cli.
package lab
