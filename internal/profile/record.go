package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Recording defaults.
const (
	DefaultFrequency = 999 // Hz: off the 1000 Hz tick, so sampling does not beat with it
	DefaultPerf      = "perf"
	// StepSlack is how much longer than the duration perf record may
	// take, and how long perf script may take, before they are killed.
	StepSlack = 60 * time.Second
)

// ErrPerfMissing is returned when the perf binary cannot be found.
var ErrPerfMissing = errors.New("perf not found (install linux-perf on Debian, linux-tools-$(uname -r) on Ubuntu)")

// ErrPerfForbidden is returned when the kernel will not let perf sample
// the process.
var ErrPerfForbidden = errors.New("perf may not sample the process")

// RecordOptions say what to profile and how.
type RecordOptions struct {
	PID       int           // the process; every thread is sampled
	Duration  time.Duration // how long to sample
	Frequency int           // samples a second a CPU (default DefaultFrequency)
	Perf      string        // the perf binary (default DefaultPerf, found on PATH)
	// Dir keeps perf.data there when set; otherwise it goes in a
	// temporary directory removed afterwards.
	Dir string
	// Proc is where /proc is (default "/proc"), for the paranoia check.
	Proc string
}

// Recording is what Record measured.
type Recording struct {
	Profile  *Profile      `json:"profile"`
	PID      int           `json:"pid"`
	Duration time.Duration `json:"duration"`
	// Frequency is the sampling rate asked of perf; Samples/Duration
	// below it means the process was often off CPU.
	Frequency int      `json:"frequency"`
	Command   []string `json:"command"` // the perf record command line
	// Event is what perf sampled on (perf evlist: "cycles", or
	// "cpu-clock" without hardware counters); Exe the process's binary,
	// links resolved, and DebugPackage the Debian package holding it
	// (its debug symbols are DebugPackage-dbgsym); "" when unknown.
	Event        string `json:"event,omitempty"`
	Exe          string `json:"exe,omitempty"`
	DebugPackage string `json:"debug_package,omitempty"`
}

func (o RecordOptions) withDefaults() RecordOptions {
	if o.Frequency <= 0 {
		o.Frequency = DefaultFrequency
	}
	if o.Perf == "" {
		o.Perf = DefaultPerf
	}
	if o.Proc == "" {
		o.Proc = "/proc"
	}
	return o
}

// Record samples the on-CPU call stacks of every thread of o.PID for
// o.Duration with perf record -g (frame pointers; kernel stacks are
// always whole, user stacks as deep as the binaries allow) and reads them
// back with perf script, symbolized from the binaries and any debug
// symbols installed (Debian: redis-tools-dbgsym, see debPackage), never from the network:
// DEBUGINFOD_URLS is emptied. Each step has a deadline. It is Sample
// then Read.
func Record(ctx context.Context, o RecordOptions) (*Recording, error) {
	d, err := Sample(ctx, o)
	if err != nil {
		return nil, err
	}
	return d.Read(ctx)
}

// PerfData is a finished perf record, not yet read.
type PerfData struct {
	Path    string // perf.data
	perf    string
	rec     Recording
	cleanup func()
}

// Sample runs perf record for o.Duration and returns when it ends, so a
// caller can close other measurements of the same interval before the
// (slower) symbolization in Read.
func Sample(ctx context.Context, o RecordOptions) (*PerfData, error) {
	o = o.withDefaults()
	if o.Duration <= 0 {
		return nil, fmt.Errorf("profile: a positive duration is needed (duration %v)", o.Duration)
	}
	d, err := prepare(o)
	if err != nil {
		return nil, err
	}
	perf := d.perf
	d.rec.Command = []string{perf, "record", "-F", strconv.Itoa(o.Frequency), "-g", "-p", strconv.Itoa(o.PID),
		"--no-buildid-cache", "-o", d.Path, "--", "sleep", strconv.FormatFloat(o.Duration.Seconds(), 'f', 3, 64)}
	if _, err := runStep(ctx, o.Duration+StepSlack, d.rec.Command); err != nil {
		d.cleanup()
		return nil, fmt.Errorf("perf record: %w", err)
	}
	return d, nil
}

// Read symbolizes the samples with perf script and parses them; a
// temporary perf.data is removed afterwards.
func (d *PerfData) Read(ctx context.Context) (*Recording, error) {
	defer d.cleanup()
	out, err := runStep(ctx, StepSlack, []string{d.perf, "script", "-F", "comm,tid,ip,sym,dso", "--no-inline", "-i", d.Path})
	if err != nil {
		return nil, fmt.Errorf("perf script: %w", err)
	}
	rec := d.rec
	if rec.Profile, err = ParsePerfScript(bytes.NewReader(out)); err != nil {
		return nil, err
	}
	rec.Event = sampledEvent(ctx, d.perf, d.Path)
	rec.DebugPackage = debPackage(ctx, rec.Exe)
	return &rec, nil
}

// runStep runs one perf command with a deadline and without debuginfod,
// returning its stdout; a failure carries the end of its stderr.
func runStep(parent context.Context, timeout time.Duration, argv []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS=", "PERF_PAGER=cat")
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if parent.Err() != nil {
		return nil, fmt.Errorf("stopped: %w", parent.Err())
	}
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("did not finish within %v", timeout)
	}
	if err != nil {
		msg := tail(stderr.String(), 400)
		if strings.Contains(msg, "perf_event_paranoid") || strings.Contains(msg, "Permission denied") {
			return nil, fmt.Errorf("%w: %s (as root, or sysctl -w kernel.perf_event_paranoid=1)", ErrPerfForbidden, msg)
		}
		return nil, fmt.Errorf("%w: %s", err, msg)
	}
	return stdout.Bytes(), nil
}

// checkParanoid refuses early, naming the sysctl, when a non-root user
// could not sample another process's kernel and user stacks.
func checkParanoid(proc string, euid int) error {
	if euid == 0 {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(proc, "sys/kernel/perf_event_paranoid"))
	if err != nil {
		return nil // no such knob: let perf decide
	}
	level, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || level <= 1 {
		return nil
	}
	return fmt.Errorf("%w: kernel.perf_event_paranoid is %d, above 1 (run as root, or sysctl -w kernel.perf_event_paranoid=1)", ErrPerfForbidden, level)
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "..." + s[len(s)-n:]
	}
	return strings.ReplaceAll(s, "\n", "; ")
}
