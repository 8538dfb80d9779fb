package serverhost

import (
	"time"

	"redline/internal/tune"
)

// The session's replies that carry tune's results. The other operations'
// arguments and replies are remote's (protocol.go): plain data both ends
// of one redline version share (the version is the protocol).

// TuneApplyResult is what an apply did; Error is set when it failed (and
// rolled back what it had applied, as Result.Undo shows).
type TuneApplyResult struct {
	Result *tune.ApplyResult `json:"result"`
	Error  string            `json:"error,omitempty"`
}

// TunePreviewResult is what applying a plan would do (tune.preview takes
// TuneApplyArgs; Scoped is ignored).
type TunePreviewResult struct {
	Outcomes []tune.Outcome `json:"outcomes"`
	Warnings []string       `json:"warnings,omitempty"`
}

// TuneVerifyResult compares a plan's values with the live ones
// (tune.verify takes TuneApplyArgs; Scoped is ignored).
type TuneVerifyResult struct {
	Outcomes []tune.Outcome `json:"outcomes"`
}

// TuneRollbackResult is what a rollback did; Error is set when some values
// could not be restored (they stay journaled).
type TuneRollbackResult struct {
	Result *tune.RollbackResult `json:"result"`
	Error  string               `json:"error,omitempty"`
}

// Sample is a reading of the session host's counters: the kernel files
// as read, for the client to difference between two samples (ProcFS
// serves them to the same readers as a local /proc).
type Sample struct {
	Time time.Time `json:"time"`
	// Files maps the fixed set of SampledFiles, /proc/PID/stat of every
	// server the session started or attached and each of their threads'
	// TaskFiles, to their contents.
	Files map[string]string `json:"files"`
	// PIDs are the servers sampled.
	PIDs []int `json:"pids,omitempty"`
	// Errors maps a file that could not be read to why.
	Errors map[string]string `json:"errors,omitempty"`
}

// SampledFiles are the kernel files a sample reads: CPU time per CPU,
// interrupt counts per CPU, softnet drops and squeezes per CPU.
var SampledFiles = []string{"/proc/stat", "/proc/interrupts", "/proc/net/softnet_stat", "/proc/softirqs",
	// the session's network namespace's TCP counters and listen queue
	// limit, for the listen-overflow evidence of a lab's runs
	"/proc/net/netstat", "/proc/net/snmp", "/proc/sys/net/core/somaxconn"}

// TaskFiles are the files of each thread of a sampled server
// (/proc/PID/task/TID/...): CPU time and state, run and wait time,
// context switches and migrations. sched exists only with
// CONFIG_SCHED_DEBUG; a file a kernel lacks is left out, not an error.
var TaskFiles = []string{"stat", "schedstat", "status", "sched"}
