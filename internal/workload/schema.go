// Package workload reads, writes and generates redline's workload files:
// a data set to preload and a weighted mix of operations to measure, as
// docs/workload.md describes. Capture derives a file from a live server's
// traffic (capture.go), Compare measures how closely a replay matches its
// source (compare.go), and Test turns a file into a bench.Test whose
// requests the file's generators write (gen.go).
//
// The package knows nothing of flags or output: the CLI maps its flags
// onto these types and prints what they return.
package workload

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"redline/internal/yamlerr"
)

// Version is the schema version this package reads and writes.
const Version = 1

// File is one workload file.
type File struct {
	Version     int    `yaml:"version"`
	Name        string `yaml:"name,omitempty"`
	Description string `yaml:"description,omitempty"`
	// Keyspaces name sets of keys: a prefix and a count of numbered keys.
	Keyspaces map[string]Keyspace `yaml:"keyspaces"`
	// Preload fills keyspaces before the measurement (not measured).
	Preload []Preload `yaml:"preload,omitempty"`
	// Scripts are Lua scripts by name, SCRIPT LOADed before the run;
	// an argument "{sha:NAME}" becomes the script's SHA1 (for EVALSHA).
	Scripts map[string]string `yaml:"scripts,omitempty"`
	// Functions are FUNCTION LOAD libraries (their "#!lua name=..."
	// header included), loaded with REPLACE before the run.
	Functions []string `yaml:"functions,omitempty"`
	Run       Run      `yaml:"run"`
	// Source is what capture measured on the server the file came from;
	// compare checks a replay against it. bench ignores it.
	Source *Profile `yaml:"source,omitempty"`
}

// Keyspace is a set of keys: Prefix followed by a number in [0, Count),
// zero-padded to Width digits. Hashtag wraps the number in {} so the
// keys of one number share a cluster slot across keyspaces.
type Keyspace struct {
	Prefix  string `yaml:"prefix"`
	Count   uint64 `yaml:"count"`
	Width   int    `yaml:"width,omitempty"`
	Hashtag bool   `yaml:"hashtag,omitempty"`
}

// Sizes is a distribution of sizes or counts: Fixed, a uniform range
// Min..Max, or a Histogram of sizes and weights (exactly one of them).
type Sizes struct {
	Fixed     int      `yaml:"fixed,omitempty"`
	Min       int      `yaml:"min,omitempty"`
	Max       int      `yaml:"max,omitempty"`
	Histogram []Bucket `yaml:"histogram,omitempty,flow"`
}

// Bucket is one size of a histogram and its weight.
type Bucket struct {
	Size   int `yaml:"size"`
	Weight int `yaml:"weight"`
}

// Value describes written values: their sizes and their bytes, "random"
// (the default; incompressible) or "compressible" (a repeated pattern).
type Value struct {
	Sizes `yaml:",inline"`
	Bytes string `yaml:"bytes,omitempty"`
}

// TTL gives a Share (0..1) of writes an expiry drawn uniformly from
// Min..Max.
type TTL struct {
	Share float64       `yaml:"share"`
	Min   time.Duration `yaml:"min"`
	Max   time.Duration `yaml:"max"`
}

// Preload fills a keyspace with keys of one type.
type Preload struct {
	Keys string `yaml:"keys"`
	// Type is string, hash, set, zset, list or stream.
	Type string `yaml:"type"`
	// Elements is the fields, members, items or entries per key (not
	// for strings).
	Elements Sizes `yaml:"elements,omitempty"`
	Value    Value `yaml:"value"`
	TTL      *TTL  `yaml:"ttl,omitempty"`
}

// Run is the measured phase.
type Run struct {
	// Pipeline is the requests per batch when -P is not given.
	Pipeline int `yaml:"pipeline,omitempty"`
	// Clients is the connections when -c is not given.
	Clients int `yaml:"clients,omitempty"`
	// Verify makes every written value a function of its key (and hash
	// field), so Verify can check what reads return (docs/workload.md).
	Verify bool `yaml:"verify,omitempty"`
	Ops    []Op `yaml:"ops"`
}

// Op is one operation of the mix: a command whose arguments may hold
// generators (docs/workload.md): {key}, {value}, {field}, {member},
// {score}, {int}, {sha:NAME}. Elements and Element append Element's
// arguments a drawn number of times (HSET's field value pairs). Multi,
// instead of Command, sends its ops inside MULTI ... EXEC.
type Op struct {
	Name    string   `yaml:"name,omitempty"`
	Weight  int      `yaml:"weight,omitempty"`
	Command []string `yaml:"command,omitempty,flow"`
	Keys    string   `yaml:"keys,omitempty"`
	// Dist picks keys: uniform (default), zipf, gaussian or sequential.
	Dist    string  `yaml:"dist,omitempty"`
	ZipfExp float64 `yaml:"zipf_exp,omitempty"`
	// Members is how many distinct {field} and {member} names are drawn
	// from (default 16).
	Members  int      `yaml:"members,omitempty"`
	Elements Sizes    `yaml:"elements,omitempty"`
	Element  []string `yaml:"element,omitempty,flow"`
	Value    Value    `yaml:"value,omitempty"`
	// TTL adds "PX ms" to a share of the commands (SET's expiry).
	TTL   *TTL `yaml:"ttl,omitempty"`
	Score *struct {
		Min float64 `yaml:"min"`
		Max float64 `yaml:"max"`
	} `yaml:"score,omitempty"`
	Multi []Op `yaml:"multi,omitempty"`
}

// Load reads and validates a workload file.
func Load(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Parse decodes a workload file strictly: an unknown field, a wrong type
// or a bad value is an error that names its line.
func Parse(b []byte) (*File, error) {
	var f File
	line, err := yamlerr.Strict(b, &f, "workload file")
	if err != nil {
		return nil, err
	}
	if err := validate(&f, line); err != nil {
		return nil, err
	}
	return &f, nil
}

// Marshal encodes f as YAML.
func Marshal(f *File) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// lineFinder returns "line N: " for a dotted path (list indexes as
// numbers) in the document, or "" when no part of it is there.
