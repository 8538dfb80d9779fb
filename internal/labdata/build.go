package labdata

import "redline/internal/buildspec"

// The build's words live in internal/buildspec (a leaf the engines
// import); these names keep the saved schema's readers as they were.
type (
	BuildSpec       = buildspec.Spec
	PGOSpec         = buildspec.PGO
	BuildProvenance = buildspec.Provenance
	BuildTraining   = buildspec.Training
	BuildStep       = buildspec.Step
)

// LoadTool is the program that measured a run (client.tool), how
// precisely, the command it ran and the libraries preloaded into it.
type LoadTool struct {
	Name      string   `json:"name"`
	Precision string   `json:"precision"`
	Argv      []string `json:"argv"`
	Env       []string `json:"env,omitempty"`
	// Preloaded are the LD_PRELOAD libraries seen mapped in its process.
	Preloaded []string `json:"preloaded,omitempty"`
}
