package benchdata

import (
	"encoding/json"
	"fmt"
	"os"
	"redline/internal/atomicfile"
	"runtime"
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
	return atomicfile.Write(path, append(b, '\n'), 0)
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
