package cli

import (
	"encoding/json"
	"os"
	"testing"

	"redline/internal/tune"
)

// TestTuneRollbackJSONNothingApplied: on a host where nothing was ever
// applied (no default state directory), rollback --json still answers in
// JSON, with no outcomes.
func TestTuneRollbackJSONNothingApplied(t *testing.T) {
	if _, err := os.Stat(tune.DefaultStateDir); err == nil {
		t.Skipf("%s exists here: the no-journal case needs a host without it", tune.DefaultStateDir)
	}
	code, out, errOut := doctorCLI(t, "tune", "rollback", "--json")
	var res tune.RollbackResult
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Outcomes == nil || len(res.Outcomes) != 0 {
		t.Errorf("exit %d, %q (%s): want an empty JSON result", code, out, errOut)
	}
}
