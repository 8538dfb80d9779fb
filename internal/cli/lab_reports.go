package cli

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"

	"redline/internal/atomicfile"
	"redline/internal/labdata"
	"redline/internal/report"
)

// writeLabReports renders the result as Markdown, HTML and CSV next to
// result.json and returns their paths. Each goes through the one atomic
// write: a link already in the results directory is replaced, never
// written through.
func writeLabReports(dir string, res *labdata.Result) ([]string, error) {
	if res == nil {
		return nil, nil
	}
	r := report.FromResult(res, filepath.Join(dir, "result.json"))
	outs := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"report.md", func(w io.Writer) error { return report.WriteMarkdown(w, r) }},
		{"report.html", func(w io.Writer) error { return report.WriteHTML(w, r) }},
		{"runs.csv", func(w io.Writer) error { return report.WriteCSV(w, r) }},
	}
	var paths []string
	for _, o := range outs {
		p := filepath.Join(dir, o.name)
		var b bytes.Buffer
		if err := o.write(&b); err != nil {
			return paths, fmt.Errorf("%s: %w", p, err)
		}
		if err := atomicfile.Write(p, b.Bytes(), 0o644); err != nil {
			return paths, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}
