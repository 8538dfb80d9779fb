package serverhost_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// imports lists pkg's direct imports (go list); it skips without go.
func imports(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", pkg).Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	return strings.Fields(string(out))
}

// TestImportDirection: the transport links no engine (its operations,
// the bench workers' included, are this package's), and the engines do
// not link the lab's saved schema (the types they share with it are
// leaves: buildspec, steerspec, profiledata, change.Step).
func TestImportDirection(t *testing.T) {
	for pkg, banned := range map[string][]string{
		"redline/internal/remote":        {"labdata", "bench", "doctor", "doctor/rules", "tune", "steer", "redisserver"},
		"redline/internal/steer":         {"labdata"},
		"redline/internal/redisserver":   {"labdata"},
		"redline/internal/redisbuild":    {"labdata"},
		"redline/internal/autotune":      {"labdata"},
		"redline/internal/profile":       {"labdata"},
		"redline/internal/serverhost":    {"labdata"},
		"redline/internal/bench/cmdline": {"labdata"},
		"redline/internal/target":        {"labdata"},
	} {
		imported := imports(t, pkg)
		for _, b := range banned {
			if slices.Contains(imported, "redline/internal/"+b) {
				t.Errorf("%s imports internal/%s", pkg, b)
			}
		}
	}
}

// TestTransportImportsLeaves: of redline's packages, internal/remote
// imports only leaves (ARCHITECTURE: remote is transport only), so an
// operation body cannot creep back in through a package the list above
// does not name.
func TestTransportImportsLeaves(t *testing.T) {
	// trusted: how a root redline finds ssh; change and steerspec: what a
	// session's cleanup report says it restored (data, no engine).
	leaves := []string{"atomicfile", "change", "shellwords", "steerspec", "trusted"}
	for _, p := range imports(t, "redline/internal/remote") {
		if name, ok := strings.CutPrefix(p, "redline/internal/"); ok && !slices.Contains(leaves, name) {
			t.Errorf("internal/remote imports internal/%s: the transport imports only leaves (%s)", name, strings.Join(leaves, ", "))
		}
	}
}
