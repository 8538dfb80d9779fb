package cli

import (
	"bytes"

	"redline/internal/report"
)

// runFleetReport renders saved doctor reports and plan verifications as
// one table by host (the Ansible collection keeps them on the controller:
// docs/fleet.md).
func runFleetReport(s *streams, f *reportFlags, srcs []*report.Source, format report.Format) error {
	fl, err := report.BuildFleet(srcs, f.by)
	if err != nil {
		return usageError("redline report: %v", err)
	}
	var b bytes.Buffer
	if err := report.WriteFleet(&b, fl, format); err != nil {
		return usageError("redline report: %v", err)
	}
	if err := f.write(s, b.Bytes()); err != nil {
		return exitCode(ExitFailure, "redline report: "+err.Error())
	}
	return nil
}
