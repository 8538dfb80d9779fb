package labdata

// Change is a tune change as a result file records it: the same fields and
// JSON as tune.Change, kept here so that reading a result does not link
// tune. (When the change leaf package lands this becomes change.Change.)
type Change struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Value  string `json:"value"`
	Why    string `json:"why,omitempty"`
	Rule   string `json:"rule,omitempty"`
	Guard  string `json:"guard,omitempty"`
}
