package labdata

import "redline/internal/change"

// DoctorSchema is the schema number of `redline doctor --json`
// (doctor.SchemaVersion; a cli test keeps the two equal, since report
// does not link the doctor).
const DoctorSchema = 1

// DoctorReport is what a fleet report reads of a saved
// `redline doctor --json` report.
type DoctorReport struct {
	Schema   int             `json:"schema"`
	Findings []DoctorFinding `json:"findings"`
	Summary  struct {
		Errors     int `json:"errors"`
		ReadErrors int `json:"read_errors"`
		NodeErrors int `json:"node_errors"`
	} `json:"summary"`
}

// DoctorFinding is one finding of a saved doctor report: its rule, how
// severe, what the rule concluded (fired, ok, ...), and the cluster node or
// server pid it judged.
type DoctorFinding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Status   string `json:"status"`
	Node     string `json:"node,omitempty"`
	Pid      int    `json:"pid,omitempty"`
}

// VerifyOutcome is one change of a saved `redline tune verify PLAN
// --json`: the planned change, the live value and whether it is the
// planned one (ok, mismatch, refused).
type VerifyOutcome struct {
	Change change.Change `json:"change"`
	Now    string        `json:"now,omitempty"`
	Status string        `json:"status"`
	Reason string        `json:"reason,omitempty"`
}
