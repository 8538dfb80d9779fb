package cli

import (
	"strings"
	"testing"

	"redline/internal/testutil"
)

// A /proc/interrupts that does not parse makes the report incomplete: it
// lists the error and doctor exits 2, even though nothing fired.
func TestDoctorParseErrorExitCode(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{"proc/interrupts": "garbage\n", "sys/.keep": ""})
	code, out, errOut := doctorCLI(t, "doctor", "--root", root, "--no-redis")
	if code != ExitError || !strings.Contains(out, "/proc/interrupts") || !strings.Contains(out, "error(s) reading the host") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
