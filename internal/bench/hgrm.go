package bench

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"redline/internal/benchdata"
)

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// HgrmPath is where WriteHgrmFile puts a test's distribution.
func HgrmPath(prefix, title string) string {
	slug := strings.Trim(unsafeName.ReplaceAllString(title, "_"), "_")
	return prefix + "-" + slug + ".hgrm"
}

// WriteHgrmFile writes the test's latency distribution in HdrHistogram's
// percentile format (milliseconds), which the HdrHistogram plotter reads.
func WriteHgrmFile(prefix string, s *benchdata.Summary) error {
	if s.Histogram == nil {
		return nil
	}
	path := HgrmPath(prefix, s.Title)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--hdr-out: %w", err)
	}
	if _, err := s.Histogram.PercentilesPrint(f, 5, 1e6); err != nil {
		f.Close()
		return fmt.Errorf("--hdr-out: write %s: %w", path, err)
	}
	return f.Close()
}
