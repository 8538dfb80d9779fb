package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"redline/internal/labdata"
	"redline/internal/report"
)

// writeLabReports renders the result as Markdown, HTML and CSV next to
// result.json and returns their paths.
func writeLabReports(dir string, res *labdata.Result) ([]string, error) {
	if res == nil {
		return nil, nil
	}
	r := report.FromResult(res, filepath.Join(dir, "result.json"))
	outs := []struct {
		name  string
		write func(*os.File) error
	}{
		{"report.md", func(f *os.File) error { return report.WriteMarkdown(f, r) }},
		{"report.html", func(f *os.File) error { return report.WriteHTML(f, r) }},
		{"runs.csv", func(f *os.File) error { return report.WriteCSV(f, r) }},
	}
	var paths []string
	for _, o := range outs {
		p := filepath.Join(dir, o.name)
		f, err := os.Create(p)
		if err != nil {
			return paths, err
		}
		err = o.write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return paths, fmt.Errorf("%s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
