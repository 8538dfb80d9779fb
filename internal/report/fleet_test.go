package report

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"redline/internal/testutil"
)

func fleetSources(t *testing.T, names ...string) []*Source {
	t.Helper()
	var srcs []*Source
	for _, n := range names {
		s, err := Load(filepath.Join("testdata", "fleet", n))
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s)
	}
	return srcs
}

// TestFleetGolden merges two doctor reports and three verifications by
// host (c has no doctor report): every format.
func TestFleetGolden(t *testing.T) {
	srcs := fleetSources(t, "doctor/host-a.json", "doctor/host-b.json", "verify/host-a.json", "verify/host-b.json", "verify/host-c.json")
	if !IsFleet(srcs) {
		t.Fatal("doctor reports and verifications are not a fleet")
	}
	f, err := BuildFleet(srcs, "host")
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []Format{Markdown, CSV, JSON} {
		var b bytes.Buffer
		if err := WriteFleet(&b, f, format); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, filepath.Join("testdata", "fleet", "fleet."+string(format)), b.Bytes())
	}
	if err := WriteFleet(&bytes.Buffer{}, f, HTML); err == nil {
		t.Error("HTML fleet table: no error")
	}
}

func TestFleetErrors(t *testing.T) {
	twice := fleetSources(t, "verify/host-a.json", "verify/host-a.json")
	twice[1].Path = "elsewhere/host-a.json"
	if _, err := BuildFleet(twice, "host"); err == nil || !strings.Contains(err.Error(), "second verification for host a") {
		t.Errorf("two verifications of a host: %v", err)
	}
	for _, c := range []struct{ text, want string }{
		{`{"schema": 2, "findings": []}`, "doctor report schema 2"},
		{`[{"change": 3}]`, "not a redline tune verify --json list"},
	} {
		if _, err := Decode("x.json", strings.NewReader(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.text, err, c.want)
		}
	}
}
