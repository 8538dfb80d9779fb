package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Format is an output format of redline report.
type Format string

// The formats.
const (
	Markdown Format = "md"
	HTML     Format = "html"
	CSV      Format = "csv"
	JSON     Format = "json"
	// Curves is CSV of the capacity searches' steps (bench --slo).
	Curves Format = "curves"
)

// Formats lists the formats every report has, in the order help texts
// name them; Curves, only for capacity searches, is apart.
var Formats = []Format{Markdown, HTML, CSV, JSON}

var writers = map[Format]func(io.Writer, *Report) error{
	Markdown: WriteMarkdown, HTML: WriteHTML, CSV: WriteCSV, JSON: WriteJSON, Curves: WriteCurves,
}

// ParseFormat reads a format name; "markdown" and "htm" are accepted too.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimPrefix(s, "."))); f {
	case "markdown":
		return Markdown, nil
	case "htm":
		return HTML, nil
	default:
		if _, ok := writers[f]; ok {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q (use md, html, csv, json or curves)", s)
}

// Write renders r in format f.
func Write(w io.Writer, r *Report, f Format) error {
	write, ok := writers[f]
	if !ok {
		return fmt.Errorf("unknown format %q (use md, html, csv, json or curves)", f)
	}
	return write(w, r)
}

// WriteJSON writes the report's tables (labels, groups with their
// statistics and comparisons, runs, notes, sources) as indented JSON with
// schema ReportSchema.
func WriteJSON(w io.Writer, r *Report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
