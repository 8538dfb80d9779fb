package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"redline/internal/labdata"
	"redline/internal/textsafe"
)

// A fleet report is one row per host from the hosts' saved doctor
// reports (`redline doctor --json`) and plan verifications (`redline tune
// verify PLAN --json`), as the Ansible collection keeps them on the
// controller: which host has which findings, which drifted from its plan.

// FleetHost is one host's row.
type FleetHost struct {
	Host string `json:"host"`
	// Fired are the findings that fired, "rule (severity)", most severe
	// first; nil without a doctor report.
	Fired []string `json:"fired"`
	// FiredBySeverity counts them.
	FiredBySeverity map[string]int `json:"fired_by_severity,omitempty"`
	// DoctorErrors counts what the doctor could not check (rules that
	// errored, files it could not read, nodes it could not reach).
	DoctorErrors int  `json:"doctor_errors"`
	HasDoctor    bool `json:"has_doctor"`
	// InPlace of Planned changes are at the plan's value; Drift lists the
	// others, "change: live (plan value)".
	HasVerify bool     `json:"has_verify"`
	Planned   int      `json:"planned"`
	InPlace   int      `json:"in_place"`
	Drift     []string `json:"drift"`
}

// Fleet is the table.
type Fleet struct {
	Hosts []FleetHost `json:"hosts"`
}

// IsFleet reports whether a source is a doctor report or a verification:
// the sources are then a fleet (BuildFleet refuses a lab or bench result
// among them).
func IsFleet(srcs []*Source) bool {
	for _, s := range srcs {
		if s.Doctor != nil || s.Verify != nil {
			return true
		}
	}
	return false
}

// BuildFleet merges the sources by host: the host is each file's label
// (FILE=LABEL), else by's NAME-VALUE in its path (--by host:
// doctor/host-web1.json), else its name.
func BuildFleet(srcs []*Source, by string) (*Fleet, error) {
	rows := map[string]*FleetHost{}
	for _, s := range srcs {
		if s.Doctor == nil && s.Verify == nil {
			return nil, &InputError{Path: s.Path, Problem: "a lab or bench result among doctor reports and verifications: report them apart"}
		}
		host := fleetHost(s, by)
		row := rows[host]
		if row == nil {
			row = &FleetHost{Host: host}
			rows[host] = row
		}
		if err := row.add(s); err != nil {
			return nil, err
		}
	}
	f := &Fleet{}
	for _, r := range rows {
		f.Hosts = append(f.Hosts, *r)
	}
	sort.Slice(f.Hosts, func(i, j int) bool { return f.Hosts[i].Host < f.Hosts[j].Host })
	return f, nil
}

func fleetHost(s *Source, by string) string {
	if s.Label != "" {
		return s.Label
	}
	if v, ok := keyFromName(s.Path, by); by != "" && ok {
		return v
	}
	return fileStem(s.Path)
}

func (r *FleetHost) add(s *Source) error {
	twice := func(what string) error {
		return &InputError{Path: s.Path, Problem: fmt.Sprintf("a second %s for host %s", what, r.Host)}
	}
	if s.Doctor != nil {
		if r.HasDoctor {
			return twice("doctor report")
		}
		r.HasDoctor, r.Fired, r.FiredBySeverity = true, []string{}, map[string]int{}
		r.DoctorErrors = s.Doctor.Summary.Errors + s.Doctor.Summary.ReadErrors + s.Doctor.Summary.NodeErrors
		for _, f := range fleetFired(s.Doctor.Findings) {
			r.Fired = append(r.Fired, fmt.Sprintf("%s (%s)", fleetFindingName(f), f.Severity))
			r.FiredBySeverity[f.Severity]++
		}
	}
	if s.Verify != nil {
		if r.HasVerify {
			return twice("verification")
		}
		r.HasVerify, r.Drift = true, []string{}
		for _, o := range s.Verify {
			r.Planned++
			if o.Status == "ok" {
				r.InPlace++
				continue
			}
			r.Drift = append(r.Drift, fleetDrift(o))
		}
	}
	return nil
}

// fleetFired are the findings that fired, most severe first, then by rule.
func fleetFired(fs []labdata.DoctorFinding) []labdata.DoctorFinding {
	var out []labdata.DoctorFinding
	for _, f := range fs {
		if f.Status == "fired" {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if a, b := rankOf(out[i].Severity), rankOf(out[j].Severity); a != b {
			return a < b
		}
		return out[i].ID < out[j].ID
	})
	return out
}

func fleetFindingName(f labdata.DoctorFinding) string {
	switch {
	case f.Node != "":
		return f.ID + "@" + f.Node
	case f.Pid != 0:
		return f.ID + "@pid " + strconv.Itoa(f.Pid)
	}
	return f.ID
}

func fleetDrift(o labdata.VerifyOutcome) string {
	name := string(o.Change.Kind) + " " + o.Change.Target
	if o.Change.Node != "" {
		name += " on " + o.Change.Node
	}
	if o.Status == "mismatch" {
		return fmt.Sprintf("%s: %s (plan %s)", name, o.Now, o.Change.Value)
	}
	return fmt.Sprintf("%s: %s %s", name, o.Status, o.Reason)
}

// WriteFleet writes the table as Markdown, CSV or JSON.
func WriteFleet(w io.Writer, f *Fleet, format Format) error {
	switch format {
	case Markdown:
		return writeFleetMarkdown(w, f)
	case CSV:
		return writeFleetCSV(w, f)
	case JSON:
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}
	return fmt.Errorf("a fleet table is md, csv or json, not %s", format)
}

func (r FleetHost) cells() (findings, errors, plan, drift string) {
	findings, errors, plan, drift = "(no doctor report)", "", "(no verification)", ""
	if r.HasDoctor {
		findings, errors = "none", strconv.Itoa(r.DoctorErrors)
		if len(r.Fired) > 0 {
			findings = strings.Join(r.Fired, ", ")
		}
	}
	if r.HasVerify {
		plan = fmt.Sprintf("%d/%d", r.InPlace, r.Planned)
		drift = strings.Join(r.Drift, "; ")
	}
	return
}

func writeFleetMarkdown(w io.Writer, f *Fleet) error {
	var b bytes.Buffer
	b.WriteString("| host | findings fired | doctor errors | plan in place | drift |\n|---|---|---|---|---|\n")
	for _, r := range f.Hosts {
		findings, errs, plan, drift := r.cells()
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", md(r.Host), md(findings), md(errs), md(plan), md(drift))
	}
	drifted := 0
	for _, r := range f.Hosts {
		if len(r.Drift) > 0 {
			drifted++
		}
	}
	fmt.Fprintf(&b, "\n%d host(s); %d drifted from the plan\n", len(f.Hosts), drifted)
	_, err := io.WriteString(w, textsafe.Printable(b.String()))
	return err
}

func writeFleetCSV(w io.Writer, f *Fleet) error {
	c := csv.NewWriter(w)
	c.Write([]string{"host", "findings_fired", "doctor_errors", "plan_in_place", "drift"})
	for _, r := range f.Hosts {
		findings, errs, plan, drift := r.cells()
		c.Write([]string{r.Host, findings, errs, plan, drift})
	}
	c.Flush()
	return c.Error()
}
