package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"redline/internal/benchdata"
	"redline/internal/labdata"
)

// Source is one input file: a lab results file or a `redline bench -o FILE`
// document, with the label given on the command line (FILE=LABEL).
type Source struct {
	// Path names the file as the user gave it.
	Path string
	// Label is the explicit label, or "" when none was given.
	Label string
	// Result is set for a lab results file, Bench for a bench document.
	Result *labdata.Result
	Bench  *benchdata.Document
	// Doctor is set for a saved `redline doctor --json` report, Verify for
	// a saved `redline tune verify PLAN --json`: a fleet report's inputs.
	Doctor *labdata.DoctorReport
	Verify []labdata.VerifyOutcome
}

// InputError is a file redline report cannot use: unreadable, not JSON,
// not a redline results file, or a schema this version does not read.
type InputError struct {
	Path    string
	Problem string
	Err     error
}

// Error says which file and what is wrong with it.
func (e *InputError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Path, e.Problem, e.Err)
	}
	return e.Path + ": " + e.Problem
}

// Unwrap returns the underlying error, if any.
func (e *InputError) Unwrap() error { return e.Err }

// readsWhat ends every "not a results file" message with what to give
// instead.
const readsWhat = "redline report reads the files written by `redline lab` (schema " +
	labdata.ResultSchema + ") and `redline bench -o FILE` (schema " + benchdata.DocumentSchema + ")"

// schemaField finds the schema of a file too damaged to decode.
var schemaField = regexp.MustCompile(`"schema"\s*:\s*"([^"]{1,64})"`)

// Load reads one input file.
func Load(path string) (*Source, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &InputError{Path: path, Problem: "cannot read", Err: err}
	}
	return Decode(path, bytes.NewReader(b))
}

// Decode reads one input from r; name is used in messages.
func Decode(name string, r io.Reader) (*Source, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, &InputError{Path: name, Problem: "cannot read", Err: err}
	}
	if src, ok, err := decodeFleet(name, b); ok {
		return src, err
	}
	var head struct {
		Schema *string `json:"schema"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		if m := schemaField.FindSubmatch(b); m != nil && strings.HasPrefix(string(m[1]), "redline.") {
			return nil, &InputError{Path: name, Problem: "truncated or damaged " + string(m[1]) + " file (" + jsonProblem(b, err) + ")"}
		}
		return nil, &InputError{Path: name, Problem: "not a redline results file (" + jsonProblem(b, err) + "); " + readsWhat}
	}
	if head.Schema == nil {
		return nil, &InputError{Path: name, Problem: `not a redline results file (no "schema" field); ` + readsWhat}
	}
	src := &Source{Path: name}
	switch {
	case labdata.Readable(*head.Schema):
		src.Result = new(labdata.Result)
		if err = json.Unmarshal(b, src.Result); err == nil {
			labdata.Upgrade(src.Result)
		}
	case *head.Schema == benchdata.DocumentSchema:
		src.Bench = new(benchdata.Document)
		err = json.Unmarshal(b, src.Bench)
	default:
		return nil, &InputError{Path: name, Problem: unknownSchema(*head.Schema)}
	}
	if err != nil {
		return nil, &InputError{Path: name, Problem: "damaged " + *head.Schema + " file (" + jsonProblem(b, err) + ")"}
	}
	return src, src.check()
}

// decodeFleet reads a doctor report (a number as its schema) or a plan
// verification (a list); ok is false for anything else.
func decodeFleet(name string, b []byte) (src *Source, ok bool, err error) {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		src = &Source{Path: name, Verify: []labdata.VerifyOutcome{}}
		if err := json.Unmarshal(trimmed, &src.Verify); err != nil {
			return nil, true, &InputError{Path: name, Problem: "not a redline tune verify --json list (" + jsonProblem(b, err) + ")"}
		}
		return src, true, nil
	}
	var head struct {
		Schema json.RawMessage `json:"schema"`
	}
	if json.Unmarshal(trimmed, &head) != nil || len(head.Schema) == 0 || head.Schema[0] < '0' || head.Schema[0] > '9' {
		return nil, false, nil
	}
	src = &Source{Path: name, Doctor: new(labdata.DoctorReport)}
	if err := json.Unmarshal(trimmed, src.Doctor); err != nil {
		return nil, true, &InputError{Path: name, Problem: "damaged redline doctor --json report (" + jsonProblem(b, err) + ")"}
	}
	if src.Doctor.Schema != labdata.DoctorSchema {
		return nil, true, &InputError{Path: name, Problem: fmt.Sprintf("doctor report schema %d: this redline reads %d", src.Doctor.Schema, labdata.DoctorSchema)}
	}
	return src, true, nil
}

func unknownSchema(s string) string {
	for _, known := range []string{labdata.ResultSchema, benchdata.DocumentSchema} {
		family := known[:strings.LastIndex(known, "/")+1]
		if strings.HasPrefix(s, family) {
			return fmt.Sprintf("schema %q is a version this redline does not read (it reads %s); use the redline that wrote it, or a newer one", s, known)
		}
	}
	if s == benchdata.SchemaVersion {
		return fmt.Sprintf("schema %q is a single bench summary, not a results file; %s", s, readsWhat)
	}
	return fmt.Sprintf("not a redline results file (schema %q); %s", s, readsWhat)
}

// jsonProblem says where the JSON went wrong, with a line number.
func jsonProblem(b []byte, err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("invalid JSON at line %d: %v", lineOf(b, syn.Offset), syn)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Sprintf("field %q at line %d holds a JSON %s, want %s", typ.Field, lineOf(b, typ.Offset), typ.Value, typ.Type)
	}
	return err.Error()
}

func lineOf(b []byte, off int64) int {
	off = min(max(off, 0), int64(len(b)))
	return 1 + bytes.Count(b[:off], []byte("\n"))
}

// check rejects files that decode but hold nothing a report can show.
func (s *Source) check() error {
	if s.Bench != nil && len(s.Bench.Results) == 0 {
		return &InputError{Path: s.Path, Problem: "bench document holds no results (the run measured nothing)"}
	}
	for i, sum := range s.benchResults() {
		if sum == nil {
			return &InputError{Path: s.Path, Problem: fmt.Sprintf("results[%d] is null", i)}
		}
	}
	return nil
}

func (s *Source) benchResults() []*benchdata.Summary {
	if s.Bench == nil {
		return nil
	}
	return s.Bench.Results
}
