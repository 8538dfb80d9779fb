package change

// Step is one change of a plan and what happened to it: a lab variant's
// plan step, a server host's applied or restored change.
type Step struct {
	Change Change `json:"change"`
	Old    string `json:"old,omitempty"`
	Status string `json:"status"` // applied, skipped, refused, restored, drifted
	Note   string `json:"note,omitempty"`
}
