package bench

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"redline/internal/atomicfile"
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
	var buf bytes.Buffer
	if _, err := s.Histogram.PercentilesPrint(&buf, 5, 1e6); err != nil {
		return fmt.Errorf("--hdr-out: write %s: %w", path, err)
	}
	// By rename: a link planted at the predictable name is replaced,
	// never followed.
	if err := atomicfile.Write(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--hdr-out: %w", err)
	}
	return nil
}
