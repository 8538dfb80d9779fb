package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// DocumentSchema names the layout of a --json file.
const DocumentSchema = "redline.bench/v1"

// Document is the --json file: one Summary per test run, in order.
type Document struct {
	Schema      string     `json:"schema"`
	Redline     string     `json:"redline_version"`
	CommandLine []string   `json:"command_line"`
	Started     time.Time  `json:"started"`
	Results     []*Summary `json:"results"`
}

// WriteDocument writes doc to path atomically (temporary file, fsync,
// rename), so a reader never sees half a file.
func WriteDocument(path string, doc Document) error {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	return writeAtomic(path, append(b, '\n'))
}

// ReadDocument reads a --json file.
func ReadDocument(path string) (Document, error) {
	var doc Document
	b, err := os.ReadFile(path)
	if err != nil {
		return doc, err
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return doc, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Schema != DocumentSchema {
		return doc, fmt.Errorf("%s: schema %q, want %q", path, doc.Schema, DocumentSchema)
	}
	return doc, nil
}

func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// HgrmPath is where WriteHgrmFile puts a test's distribution.
func HgrmPath(prefix, title string) string {
	slug := strings.Trim(unsafeName.ReplaceAllString(title, "_"), "_")
	return prefix + "-" + slug + ".hgrm"
}

// WriteHgrmFile writes the test's latency distribution in HdrHistogram's
// percentile format (milliseconds), which the HdrHistogram plotter reads.
func WriteHgrmFile(prefix string, s *Summary) error {
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

// LocalClientInfo describes the machine generating the load.
func LocalClientInfo(redlineVersion string) ClientInfo {
	c := ClientInfo{Redline: redlineVersion, Go: runtime.Version(), CPUs: runtime.NumCPU()}
	c.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		c.Kernel = unix.ByteSliceToString(u.Release[:])
	}
	return c
}
