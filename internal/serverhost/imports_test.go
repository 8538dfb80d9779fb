package serverhost_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportDirection: the transport links no engine (its operations are
// this package's), and the engines do not link the lab's saved schema
// (adapters convert). internal/bench is the bench workers' (bench.go),
// which issue 23 item 2 moves out of the transport.
func TestImportDirection(t *testing.T) {
	for pkg, banned := range map[string][]string{
		"redline/internal/remote":      {"doctor", "doctor/rules", "tune", "steer", "redisserver"},
		"redline/internal/steer":       {"labdata"},
		"redline/internal/redisserver": {"labdata"},
	} {
		out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", pkg).Output()
		if err != nil {
			t.Skipf("go list: %v", err)
		}
		imports := strings.Fields(string(out))
		for _, b := range banned {
			if slices.Contains(imports, "redline/internal/"+b) {
				t.Errorf("%s imports internal/%s", pkg, b)
			}
		}
	}
}
