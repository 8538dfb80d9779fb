package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/doctor"
	"redline/internal/labdata"
)

// TestReportFleetFromDoctor merges what doctor --json writes with a
// verification, by host from the file names.
func TestReportFleetFromDoctor(t *testing.T) {
	if doctor.SchemaVersion != labdata.DoctorSchema {
		t.Fatalf("doctor writes schema %d, report reads %d: change labdata.DoctorSchema with the doctor", doctor.SchemaVersion, labdata.DoctorSchema)
	}
	dir := t.TempDir()
	for _, d := range []string{"doctor", "verify"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	doc := filepath.Join(dir, "doctor", "host-web1.json")
	if code, _, errOut := doctorCLI(t, "doctor", "--root", "../../testdata/hosts/kunpeng920-4node-hinic", "--json", "-o", doc); code == ExitError {
		t.Fatalf("doctor: %s", errOut)
	}
	ver := filepath.Join(dir, "verify", "host-web1.json")
	if err := os.WriteFile(ver, []byte(`[{"change": {"kind": "sysctl", "target": "net.core.somaxconn", "value": "8192"}, "now": "4096", "status": "mismatch"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := doctorCLI(t, "report", "--by", "host", doc, ver)
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "| web1 | ") || !strings.Contains(out, "sysctl net.core.somaxconn: 4096 (plan 8192)") || !strings.Contains(out, "1 drifted") {
		t.Errorf("fleet table:\n%s", out)
	}
	if code, _, errOut := doctorCLI(t, "report", doc, "../../internal/report/testdata/fleet/verify/host-a.json", "--format", "html"); code != ExitError || !strings.Contains(errOut, "md, csv or json") {
		t.Errorf("an HTML fleet table: exit %d, %s", code, errOut)
	}
}
