package cli

import (
	"bytes"
	"io"
	"time"

	"redline/internal/atomicfile"
	"redline/internal/doctor"
)

// checkDoctorFormat checks --format against --json and --markdown.
func checkDoctorFormat(o *doctorOptions) error {
	switch {
	case o.format != "" && o.format != "prom":
		return usageError("redline doctor: --format %s: unknown (prom is the one format named; --json and --markdown are flags)", o.format)
	case o.format != "" && (o.json || o.markdown):
		return usageError("redline doctor: choose one of --format prom, --json and --markdown")
	}
	return nil
}

// writeDoctorOutput writes the report of the host named host to standard
// output, or to -o FILE atomically.
func writeDoctorOutput(w io.Writer, rep *doctor.Report, o *doctorOptions, min doctor.Severity, host string) error {
	var b bytes.Buffer
	if err := writeDoctorFormat(&b, rep, o, min, host); err != nil {
		return err
	}
	if o.output == "" || o.output == "-" {
		_, err := w.Write(b.Bytes())
		return err
	}
	return atomicfile.Write(o.output, b.Bytes(), 0o644)
}

func writeDoctorFormat(w io.Writer, rep *doctor.Report, o *doctorOptions, min doctor.Severity, host string) error {
	if o.format != "prom" {
		return writeDoctorReport(w, rep, o, min)
	}
	return doctor.WritePrometheus(w, rep, doctor.PromOptions{Host: host, Now: time.Now()})
}
